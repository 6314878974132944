// The Cognito emulator's entry point for local/cognito-local.ts: cognito-local's own default server
// (state in ./.cognito of the working directory, PORT/HOST from the environment) with a JSON logger,
// and every confirmation code it "sends" (it has no mail server) also appended as one JSON line to
// ./codes.jsonl, which the parent reads: a file is read when asked, whatever the pipes are doing.
import { appendFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const fromEmulator = createRequire(require.resolve('cognito-local/package.json'));
const pino = fromEmulator('pino');
const { ConsoleMessageSender } = fromEmulator('./lib/services/messageDelivery/consoleMessageSender');
const { createDefaultServer } = fromEmulator('./lib/server');

const printCode = ConsoleMessageSender.prototype.sendToConsole;
ConsoleMessageSender.prototype.sendToConsole = function sendToConsole(ctx, user, destination, message) {
  appendFileSync('codes.jsonl', `${JSON.stringify({ destination, code: message.__code, at: Date.now() })}\n`);
  return printCode.call(this, ctx, user, destination, message);
};

const logger = pino({ level: 'info', base: undefined }, pino.destination({ fd: 1, sync: true }));
const server = await createDefaultServer(logger);
const http = await server.start();
const address = http.address();
logger.info(`Cognito Local running on http://${address.address}:${address.port}`);
