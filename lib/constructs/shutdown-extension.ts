import { Stack } from 'aws-cdk-lib';
import { Architecture, Code, type ILayerVersion, LayerVersion } from 'aws-cdk-lib/aws-lambda';
import type { Construct } from 'constructs';
import { GATEWAY_RUNTIME, REPO_ROOT } from './gateway-function';

/**
 * The layer's folder: `extensions/modelmux-shutdown`, a Bash external extension that registers for the
 * SHUTDOWN event only (Lambda Extensions API), unpacked by Lambda into /opt/extensions.
 */
export const SHUTDOWN_EXTENSION_DIR = `${REPO_ROOT}functions/shutdown-extension-layer`;

const LAYER_ID = 'ShutdownExtension';

/**
 * The stack's one shutdown-extension layer (created on first use). With an external extension
 * registered, Lambda sends the runtime SIGTERM before it ends an execution environment, with up to
 * 300 ms of its 2,000-ms shutdown budget before SIGKILL; without one it sends nothing
 * (https://github.com/aws-samples/graceful-shutdown-with-aws-lambda). On that SIGTERM,
 * functions/shared/billing/lease.ts returns the container's credit leases, so a per-invocation
 * environment that Lambda retires does not leave its unspent slice reserved until the orphan sweep
 * (docs/credit-leases.md, "Shutdown"). The extension is never woken during an invocation (it is not
 * registered for INVOKE), so it adds no time to one; its process is Bash (~3 MB), no second Node.
 */
export function shutdownExtension(scope: Construct): ILayerVersion {
  const stack = Stack.of(scope);
  const existing = stack.node.tryFindChild(LAYER_ID);
  if (existing !== undefined) return existing as LayerVersion;
  return new LayerVersion(stack, LAYER_ID, {
    code: Code.fromAsset(SHUTDOWN_EXTENSION_DIR),
    compatibleArchitectures: [Architecture.ARM_64],
    compatibleRuntimes: [GATEWAY_RUNTIME],
    description: 'modelmux: an external extension registered for SHUTDOWN, so Lambda sends the runtime SIGTERM (credit leases are returned)',
  });
}
