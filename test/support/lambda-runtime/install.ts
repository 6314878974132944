/**
 * `npm run lambda-runtime` (and `npm run test:slow`'s pretest:slow): installs the Lambda runtime the runtime-client
 * test uses — Node LAMBDA_NODE_VERSION for this CPU and aws-lambda-ric RIC_VERSION (versions.ts) — into
 * .cache/lambda-runtime (git-ignored), from the npm registry. Does nothing when the pinned versions are
 * already there. aws-lambda-ric compiles its native Runtime API client at install (curl and
 * aws-lambda-cpp with cmake, then node-gyp against the machine's Node headers): about 2 minutes, once.
 * cmake, make and a C++ compiler are needed; as root on Debian, a missing cmake is installed with apt-get.
 * Exit 1 with the reason when anything fails.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { LAMBDA_NODE_VERSION, NODE_PACKAGE, RIC_VERSION, RUNTIME_DIR, runtimePaths, runtimeProblem, type InstallStamp } from './versions';

function has(command: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' }).status === 0;
}

function ensureBuildTools(): void {
  const missing = ['cmake', 'make', 'g++'].filter((c) => !has(c));
  if (missing.length === 0) return;
  if (process.getuid?.() === 0 && has('apt-get')) {
    process.stdout.write(`lambda-runtime: installing ${missing.join(', ')} with apt-get (needed to build aws-lambda-ric's native client)\n`);
    execFileSync('apt-get', ['update', '-qq'], { stdio: 'inherit' });
    const packages = missing.map((c) => (c === 'g++' ? 'g++' : c));
    execFileSync('apt-get', ['install', '-y', '-qq', ...packages], { stdio: 'inherit', env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
    return;
  }
  throw new Error(`aws-lambda-ric builds a native client at install and needs ${missing.join(', ')}: install them (Debian: apt-get install -y cmake make g++)`);
}

function install(): void {
  if (process.platform !== 'linux') throw new Error(`the Lambda runtime test needs Linux (Lambda's OS); this is ${process.platform}`);
  ensureBuildTools();
  rmSync(RUNTIME_DIR, { recursive: true, force: true });
  mkdirSync(RUNTIME_DIR, { recursive: true });
  writeFileSync(
    `${RUNTIME_DIR}/package.json`,
    `${JSON.stringify({ private: true, description: 'Lambda nodejs24.x stand-in for test/lib/lambda-runtime.test.ts (npm run lambda-runtime)' }, null, 2)}\n`,
  );
  process.stdout.write(
    `lambda-runtime: installing ${NODE_PACKAGE}@${LAMBDA_NODE_VERSION} and aws-lambda-ric@${RIC_VERSION} into ${RUNTIME_DIR} (builds a native client, ~2 min)\n`,
  );
  const npm = spawnSync(
    'npm',
    ['install', '--no-audit', '--no-fund', '--loglevel=error', `${NODE_PACKAGE}@${LAMBDA_NODE_VERSION}`, `aws-lambda-ric@${RIC_VERSION}`],
    {
      cwd: RUNTIME_DIR,
      stdio: ['ignore', 'inherit', 'inherit'],
    },
  );
  if (npm.status !== 0) throw new Error(`npm install failed (exit ${npm.status}) in ${RUNTIME_DIR}`);
  const version = execFileSync(runtimePaths.node, ['--version'], { encoding: 'utf8' }).trim();
  if (version !== `v${LAMBDA_NODE_VERSION}`) throw new Error(`${runtimePaths.node} is ${version}, expected v${LAMBDA_NODE_VERSION}`);
  const stamp: InstallStamp = { node: LAMBDA_NODE_VERSION, ric: RIC_VERSION, arch: process.arch };
  writeFileSync(runtimePaths.stamp, `${JSON.stringify(stamp)}\n`);
}

try {
  if (runtimeProblem() !== undefined) install();
  const problem = runtimeProblem();
  if (problem !== undefined) throw new Error(problem);
  process.stdout.write(`lambda-runtime: Node ${LAMBDA_NODE_VERSION} + aws-lambda-ric ${RIC_VERSION} ready in ${RUNTIME_DIR}\n`);
} catch (err) {
  process.stderr.write(`lambda-runtime: ${(err as Error).message}\n`);
  process.exitCode = 1;
}
