import { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { ModelmuxStack } from '../../lib/modelmux-stack';
import { CHAT_DEFAULT_MEMORY_MB } from '../../lib/constructs/chat-endpoint';
import { EMBEDDINGS_DEFAULT_MEMORY_MB } from '../../lib/constructs/embeddings-endpoint';
import { stackPropsFromContext } from '../../lib/stack-context';
import { allIamStatements, type CfnResource, resourcesOfType, testApp } from './template-helpers';

/**
 * Stack options read from context. Bundling is skipped here (stack.test.ts covers the real bundle), so
 * each variant synthesises in milliseconds.
 */

function synth(context: Record<string, unknown>): Template {
  const app = testApp(context, { bundle: false });
  const stack = new ModelmuxStack(app, 'Modelmux', stackPropsFromContext(app.node));
  return Template.fromStack(stack);
}

/** The functions that call upstreams (chat, embeddings): not the account API's, nor CDK's own helpers (the dashboard's upload). */
function upstreamFunctions(template: Template): CfnResource[] {
  return Object.entries(resourcesOfType(template, 'AWS::Lambda::Function'))
    .filter(([id]) => !id.startsWith('Account') && !id.startsWith('CustomCDKBucketDeployment'))
    .map(([, fn]) => fn);
}

function functionEnvs(template: Template): Array<Record<string, unknown>> {
  return upstreamFunctions(template).map((fn) => (fn.Properties?.Environment as { Variables: Record<string, unknown> }).Variables);
}

function secretStatements(template: Template): unknown[] {
  return allIamStatements(template)
    .filter(({ statement }) => JSON.stringify(statement.Action).includes('secretsmanager:'))
    .map(({ statement }) => statement);
}

describe('stack options from context', () => {
  it('skips CloudFront when cloudfront=false and points BaseUrl at the chat Function URL', () => {
    const template = synth({ cloudfront: 'false' });
    template.resourceCountIs('AWS::CloudFront::Distribution', 0);
    const chatUrlId = Object.entries(resourcesOfType(template, 'AWS::Lambda::Url')).find(([, url]) => url.Properties?.InvokeMode === 'RESPONSE_STREAM')?.[0];
    template.hasOutput('BaseUrl', { Value: { 'Fn::Join': ['', [{ 'Fn::GetAtt': [chatUrlId, 'FunctionUrl'] }, 'v1']] } });
    template.hasOutput('EmbeddingsUrl', {});
    // No proxy in front: buffered chat may use the function's 300 s less the 5 s settle reserve.
    expect(functionEnvs(template).map((env) => env.BUFFERED_CHAT_BUDGET_MS).filter(Boolean)).toEqual(['295000']);
  }, 120_000); // the file's first synth loads aws-cdk-lib's constructs: ~20 s alone, more on a busy machine

  it('imports the upstream secret by name: no secret created, GetSecretValue on that name and its 6-character suffix only', () => {
    const template = synth({ upstreamSecretName: 'modelmux/upstream-keys' });
    template.resourceCountIs('AWS::SecretsManager::Secret', 0);
    const statements = secretStatements(template);
    expect(statements.length).toBe(2);
    for (const statement of statements) {
      expect(statement).toMatchObject({ Action: 'secretsmanager:GetSecretValue' });
      expect(JSON.stringify(statement)).toContain(':secret:modelmux/upstream-keys-??????');
    }
    for (const env of functionEnvs(template)) expect(JSON.stringify(env.UPSTREAM_SECRET_ARN)).toContain(':secret:modelmux/upstream-keys');
  });

  it('imports the upstream secret by full ARN and grants exactly that ARN', () => {
    const arn = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:team/llm-keys-AbCdEf';
    const template = synth({ upstreamSecretName: arn });
    template.resourceCountIs('AWS::SecretsManager::Secret', 0);
    for (const statement of secretStatements(template)) expect(statement).toMatchObject({ Action: 'secretsmanager:GetSecretValue', Resource: arn });
    for (const env of functionEnvs(template)) expect(env.UPSTREAM_SECRET_ARN).toBe(arn);
    template.hasOutput('PutUpstreamKeysCommand', {
      Value: `aws secretsmanager put-secret-value --region eu-west-1 --secret-id ${arn} --secret-string file://upstream-keys.json`,
    });
  });

  it('passes base-URL overrides (object or JSON string) as plain env', () => {
    for (const upstreamBaseUrls of [{ OPENAI_BASE_URL: 'https://proxy.example/v1' }, '{"OPENAI_BASE_URL":"https://proxy.example/v1"}']) {
      const template = synth({ upstreamBaseUrls });
      for (const env of functionEnvs(template)) expect(env.OPENAI_BASE_URL).toBe('https://proxy.example/v1');
    }
  });

  it('refuses an API key (or any non-base-URL name) passed as a base-URL override', () => {
    expect(() => synth({ upstreamBaseUrls: { OPENAI_API_KEY: 'sk-should-not-be-here' } })).toThrow(/OPENAI_API_KEY is not one of .*API keys belong in the secret/);
    expect(() => synth({ upstreamBaseUrls: { OPENAI_BASE_URL: 'not a url' } })).toThrow(/must be an http\(s\) URL/);
  });

  it('sets reserved concurrency only when asked', () => {
    const template = synth({ chatReservedConcurrency: '20', embeddingsReservedConcurrency: 5 });
    const reserved = upstreamFunctions(template).map((fn) => fn.Properties?.ReservedConcurrentExecutions);
    expect(reserved.sort()).toEqual([20, 5]);
    expect(Object.values(resourcesOfType(template, 'AWS::Lambda::Function')).filter((fn) => fn.Properties?.ReservedConcurrentExecutions !== undefined)).toHaveLength(2);
    expect(() => synth({ chatReservedConcurrency: 'lots' })).toThrow(/chatReservedConcurrency must be a non-negative integer/);
  });

  it('passes publicBaseUrl to every function as PUBLIC_BASE_URL', () => {
    const template = synth({ publicBaseUrl: 'https://api.example.com' });
    // Every modelmux function (CDK's own dashboard-upload handler is not one).
    const envs = Object.entries(resourcesOfType(template, 'AWS::Lambda::Function'))
      .filter(([id]) => !id.startsWith('CustomCDKBucketDeployment'))
      .map(([, fn]) => (fn.Properties?.Environment as { Variables: Record<string, unknown> }).Variables);
    expect(envs).toHaveLength(3);
    for (const env of envs) expect(env.PUBLIC_BASE_URL).toBe('https://api.example.com');
  });

  it('sets each function memory from chatMemoryMb / embeddingsMemoryMb, and refuses sizes Lambda does not offer', () => {
    const memory = (template: Template): { chat: unknown; embeddings: unknown } => {
      const functions = Object.entries(resourcesOfType(template, 'AWS::Lambda::Function'));
      const of = (prefix: string): unknown => functions.find(([id]) => id.startsWith(prefix))?.[1].Properties?.MemorySize;
      return { chat: of('ChatGateway'), embeddings: of('EmbeddingsGateway') };
    };
    expect(memory(synth({ chatMemoryMb: '256', embeddingsMemoryMb: 512 }))).toEqual({ chat: 256, embeddings: 512 });
    expect(memory(synth({}))).toEqual({ chat: CHAT_DEFAULT_MEMORY_MB, embeddings: EMBEDDINGS_DEFAULT_MEMORY_MB });
    expect(() => synth({ chatMemoryMb: '64' })).toThrow(/chatMemoryMb must be an integer from 128 to 10240/);
    expect(() => synth({ embeddingsMemoryMb: 20_000 })).toThrow(/embeddingsMemoryMb must be an integer from 128 to 10240/);
    expect(() => synth({ chatMemoryMb: '1.5GB' })).toThrow(/chatMemoryMb must be a non-negative integer/);
  });

  it('rejects a cloudfront flag that is not a boolean', () => {
    expect(() => synth({ cloudfront: 'yes' })).toThrow(/cloudfront must be true or false/);
  });
});
