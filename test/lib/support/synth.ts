import { Template } from 'aws-cdk-lib/assertions';
import { ModelmuxStack } from '../../../lib/modelmux-stack';
import { stackPropsFromContext } from '../../../lib/stack-context';
import { testApp } from '../template-helpers';

/** A synthesised stack: its template and the cloud assembly's directory (the handlers' assets). */
export interface SynthesisedStack {
  template: Template;
  assemblyDir: string;
}

/**
 * One synthesised stack per context, shared by every CDK test: the `stack` tier runs these files in
 * one worker without isolation (vitest.config.ts), so this memo outlives each file and aws-cdk-lib
 * loads once. The default context (`{}`, cdk.json's) is synthesised with real esbuild bundling of the
 * handlers, since stack.test.ts reads the bundles; every other context skips bundling (those tests are
 * about the template).
 */
const cache = new Map<string, SynthesisedStack>();

/** The stack for `context` (cdk.json's context plus these keys), synthesised once; throws what synth throws. */
export function synthStack(context: Record<string, unknown> = {}): SynthesisedStack {
  const key = JSON.stringify(context);
  let synthesised = cache.get(key);
  if (synthesised === undefined) {
    const app = testApp(context, { bundle: Object.keys(context).length === 0 });
    const stack = new ModelmuxStack(app, 'Modelmux', stackPropsFromContext(app.node));
    const assembly = app.synth();
    const template = Template.fromJSON(assembly.getStackArtifact(stack.artifactId).template as Record<string, unknown>);
    synthesised = { template, assemblyDir: assembly.directory };
    cache.set(key, synthesised);
  }
  return synthesised;
}

/** The template of the stack for `context` (see synthStack). */
export function synthTemplate(context: Record<string, unknown> = {}): Template {
  return synthStack(context).template;
}
