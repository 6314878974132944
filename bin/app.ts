#!/usr/bin/env node
/** The CDK app: one stack, `Modelmux`, configured from context (see lib/stack-context.ts). */
import { App } from 'aws-cdk-lib';
import { ModelmuxStack } from '../lib/modelmux-stack';
import { stackPropsFromContext } from '../lib/stack-context';

const app = new App();
const { CDK_DEFAULT_ACCOUNT: account, CDK_DEFAULT_REGION: region } = process.env;
new ModelmuxStack(app, 'Modelmux', {
  // Environment-agnostic when the CLI has no credentials (offline synth); pinned when it has.
  env: account || region ? { account, region } : undefined,
  ...stackPropsFromContext(app.node),
});
