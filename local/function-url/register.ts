/**
 * Side-effect module: importing it defines `globalThis.awslambda` (see `installAwslambdaGlobals`).
 * ES modules evaluate in import order, so list it before any handler import:
 *
 *   import './function-url/register.js';
 *   import { handler } from '../functions/chat-completions/handler.js';
 */
import { installAwslambdaGlobals } from './awslambda-globals.js';

installAwslambdaGlobals();
