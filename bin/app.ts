#!/usr/bin/env node
/**
 * The CDK app: one stack, `Modelmux`, configured from context (see lib/stack-context.ts), checked by
 * cdk-nag's AwsSolutions pack at every synth (an unacknowledged error fails it; acknowledgements and
 * their reasons are beside the resources they concern).
 */
import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { ModelmuxStack } from '../lib/modelmux-stack';
import { stackPropsFromContext } from '../lib/stack-context';

const app = new App();
const { CDK_DEFAULT_ACCOUNT: account, CDK_DEFAULT_REGION: region } = process.env;
new ModelmuxStack(app, 'Modelmux', {
  // Environment-agnostic when the CLI has no credentials (offline synth); pinned when it has.
  env: account || region ? { account, region } : undefined,
  ...stackPropsFromContext(app.node),
});
Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
