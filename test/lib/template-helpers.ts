import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { App } from 'aws-cdk-lib';
import type { Template } from 'aws-cdk-lib/assertions';
import { REPO_ROOT } from '../../lib/constructs/gateway-function';

/** A CloudFormation resource as the assertions read it. */
export interface CfnResource {
  Type: string;
  Properties?: Record<string, unknown>;
  DeletionPolicy?: string;
  UpdateReplacePolicy?: string;
}

/** One IAM policy statement. */
export interface IamStatement {
  Sid?: string;
  Effect: string;
  Action: string | string[];
  Resource?: unknown;
  Principal?: unknown;
}

/** The `context` block of cdk.json, so tests synthesise with the same feature flags as `cdk synth`. */
export function cdkJsonContext(): Record<string, unknown> {
  const cdkJson = JSON.parse(readFileSync(`${REPO_ROOT}cdk.json`, 'utf8')) as { context?: Record<string, unknown> };
  return cdkJson.context ?? {};
}

/**
 * An App with cdk.json's context plus `extra`. `bundle: false` skips esbuild (NodejsFunction then
 * stages a placeholder asset), for tests about stack options rather than code.
 */
export function testApp(extra: Record<string, unknown> = {}, options: { bundle?: boolean } = {}): App {
  const context: Record<string, unknown> = { ...cdkJsonContext(), ...extra };
  context['aws:cdk:enable-path-metadata'] = true;
  if (options.bundle === false) context['aws:cdk:bundling-stacks'] = [];
  return new App({ context });
}

/** All resources of the template, by logical id. */
export function resourcesOf(template: Template): Record<string, CfnResource> {
  return (template.toJSON() as { Resources: Record<string, CfnResource> }).Resources;
}

/** Resources of one type, by logical id. */
export function resourcesOfType(template: Template, type: string): Record<string, CfnResource> {
  return Object.fromEntries(Object.entries(resourcesOf(template)).filter(([, resource]) => resource.Type === type));
}

/** Every IAM statement in the template: identity policies, role inline and trust policies, managed policies. */
export function allIamStatements(template: Template): Array<{ owner: string; statement: IamStatement }> {
  const found: Array<{ owner: string; statement: IamStatement }> = [];
  const addDocument = (owner: string, document: unknown): void => {
    const statements = (document as { Statement?: IamStatement[] } | undefined)?.Statement ?? [];
    for (const statement of statements) found.push({ owner, statement });
  };
  for (const [id, resource] of Object.entries(resourcesOf(template))) {
    const props = resource.Properties ?? {};
    if (resource.Type === 'AWS::IAM::Policy' || resource.Type === 'AWS::IAM::ManagedPolicy') addDocument(id, props.PolicyDocument);
    if (resource.Type === 'AWS::IAM::Role') {
      addDocument(id, props.AssumeRolePolicyDocument);
      for (const policy of (props.Policies as Array<{ PolicyDocument: unknown }> | undefined) ?? []) addDocument(id, policy.PolicyDocument);
    }
  }
  return found;
}

/** A statement's actions as an array. */
export function actionsOf(statement: IamStatement): string[] {
  return Array.isArray(statement.Action) ? statement.Action : [statement.Action];
}

/** A statement's resources as an array. */
export function resourcesOfStatement(statement: IamStatement): unknown[] {
  if (statement.Resource === undefined) return [];
  return Array.isArray(statement.Resource) ? statement.Resource : [statement.Resource];
}

/** The logical id of the single resource of `type` whose path (aws:cdk:path metadata) contains `pathPart`. */
export function logicalIdByPath(template: Template, type: string, pathPart: string): string {
  const all = (template.toJSON() as { Resources: Record<string, CfnResource & { Metadata?: { 'aws:cdk:path'?: string } }> }).Resources;
  const matches = Object.entries(all).filter(([, resource]) => resource.Type === type && (resource.Metadata?.['aws:cdk:path'] ?? '').includes(pathPart));
  if (matches.length !== 1) throw new Error(`expected one ${type} at ${pathPart}, found ${matches.length}`);
  return matches[0]![0];
}

/** The folder in the cloud assembly holding a Lambda function's code asset (its bundle). */
export function assetDirOf(template: Template, assemblyDir: string, fnLogicalId: string): string {
  const fn = resourcesOfType(template, 'AWS::Lambda::Function')[fnLogicalId];
  const s3Key = String((fn?.Properties?.Code as { S3Key?: string } | undefined)?.S3Key ?? '');
  if (!s3Key.endsWith('.zip')) throw new Error(`function ${fnLogicalId} has no zip asset`);
  return join(assemblyDir, `asset.${s3Key.replace(/\.zip$/, '')}`);
}
