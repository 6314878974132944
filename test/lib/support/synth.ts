import { Template } from 'aws-cdk-lib/assertions';
import { ModelmuxStack } from '../../../lib/modelmux-stack';
import { stackPropsFromContext } from '../../../lib/stack-context';
import { testApp } from '../template-helpers';

/**
 * One synthesised template per context, shared by every test in the worker that asks for the same
 * context (synthesising the stack takes seconds; bundling is skipped: these tests are about the
 * template, stack.test.ts covers the real bundle).
 */
const cache = new Map<string, Template>();

/** The template of the stack for `context` (cdk.json's context plus these keys), synthesised once. */
export function synthTemplate(context: Record<string, unknown> = {}): Template {
  const key = JSON.stringify(context);
  let template = cache.get(key);
  if (template === undefined) {
    const app = testApp(context, { bundle: false });
    const stack = new ModelmuxStack(app, 'Modelmux', stackPropsFromContext(app.node));
    template = Template.fromStack(stack);
    cache.set(key, template);
  }
  return template;
}
