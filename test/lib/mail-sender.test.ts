import type { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it, vi } from 'vitest';
import { stackPropsFromContext } from '../../lib/stack-context';
import { synthTemplate } from './support/synth';
import { actionsOf, allIamStatements, type CfnResource, resourcesOfType, testApp } from './template-helpers';

/**
 * Mail from a verified SES identity: `-c emailFrom=…` gives the functions that send
 * mail `EMAIL_FROM` and `ses:SendEmail` on that identity only, and the user pool sends its codes
 * through it; without it the stack is as before (no mail from the functions, Cognito's own sender).
 */

vi.setConfig({ testTimeout: 120_000 });

/**
 * The roles (logical-id prefixes) of the functions that send the account emails: the settle function
 * (the request functions hand it a crossed threshold on the settle queue) and the account function
 * (Stripe's webhook). Not the chat and embeddings functions.
 */
const SENDERS = ['AccountGateway', 'SettlePathSettle'];

/** EMAIL_FROM of every function that has it, by function logical id. */
function emailFromByFunction(template: Template): Record<string, unknown> {
  const found: Record<string, unknown> = {};
  for (const [id, fn] of Object.entries(resourcesOfType(template, 'AWS::Lambda::Function'))) {
    const value = (fn.Properties?.Environment as { Variables?: Record<string, unknown> } | undefined)?.Variables?.EMAIL_FROM;
    if (value !== undefined) found[id] = value;
  }
  return found;
}

/** Every IAM statement naming an SES action, with the policy that holds it. */
function sesStatements(template: Template): ReturnType<typeof allIamStatements> {
  return allIamStatements(template).filter(({ statement }) => actionsOf(statement).some((a) => a.startsWith('ses:')));
}

/** The user pool's EmailConfiguration (undefined: Cognito's default sender). */
function poolEmail(template: Template): Record<string, unknown> | undefined {
  const pools = Object.values(resourcesOfType(template, 'AWS::Cognito::UserPool'));
  expect(pools).toHaveLength(1);
  return (pools[0] as CfnResource).Properties?.EmailConfiguration as Record<string, unknown> | undefined;
}

/** `arn:<partition>:ses:<region>:<account>:identity/<identity>` as CDK's formatArn writes it for an environment-agnostic stack. */
const identityArn = (identity: string) => ({
  'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':ses:', { Ref: 'AWS::Region' }, ':', { Ref: 'AWS::AccountId' }, `:identity/${identity}`]],
});

/** The policy resources of the senders' roles: policy logical id → its role's logical id. */
function policyRoles(template: Template): Record<string, string> {
  return Object.fromEntries(
    Object.entries(resourcesOfType(template, 'AWS::IAM::Policy')).map(([id, policy]) => [
      id,
      String((policy.Properties?.Roles as Array<{ Ref: string }>)[0]?.Ref),
    ]),
  );
}

describe('mail from a verified SES identity', () => {
  it('without emailFrom: no EMAIL_FROM, no ses: permission, Cognito sends with its own sender', () => {
    const template = synthTemplate();
    expect(emailFromByFunction(template)).toEqual({});
    expect(sesStatements(template)).toEqual([]);
    const email = poolEmail(template);
    expect(email?.SourceArn).toBeUndefined();
    expect(email?.EmailSendingAccount ?? 'COGNITO_DEFAULT').toBe('COGNITO_DEFAULT');
  });

  it('emailFrom + emailFromName: EMAIL_FROM on the two functions that send, ses:SendEmail on the identity from that address only, Cognito through SES', () => {
    const template = synthTemplate({ emailFrom: 'billing@example.com', emailFromName: 'modelmux Billing' });
    const env = emailFromByFunction(template);
    expect(
      Object.keys(env)
        .sort()
        .map((id) => SENDERS.find((p) => id.startsWith(p))),
    ).toEqual(SENDERS);
    for (const value of Object.values(env)) expect(value).toBe('"modelmux Billing" <billing@example.com>');

    const statements = sesStatements(template);
    const roles = policyRoles(template);
    expect(statements.map(({ owner }) => SENDERS.find((p) => (roles[owner] ?? owner).startsWith(p))).sort()).toEqual(SENDERS);
    for (const { statement } of statements) {
      expect(statement).toMatchObject({ Sid: 'SesSendEmail', Effect: 'Allow', Action: 'ses:SendEmail', Resource: identityArn('billing@example.com') });
      expect((statement as { Condition?: unknown }).Condition).toEqual({ StringEquals: { 'ses:FromAddress': 'billing@example.com' } });
    }

    expect(poolEmail(template)).toEqual({
      EmailSendingAccount: 'DEVELOPER',
      From: 'modelmux Billing <billing@example.com>',
      SourceArn: identityArn('billing@example.com'),
    });
  });

  it('emailIdentity = the domain: permission and Cognito on the domain identity, still only from the address', () => {
    const template = synthTemplate({ emailFrom: 'billing@example.com', emailIdentity: 'example.com' });
    for (const value of Object.values(emailFromByFunction(template))) expect(value).toBe('billing@example.com');
    const statements = sesStatements(template);
    expect(statements).toHaveLength(SENDERS.length);
    for (const { statement } of statements) {
      expect(statement.Resource).toEqual(identityArn('example.com'));
      expect((statement as { Condition?: unknown }).Condition).toEqual({ StringEquals: { 'ses:FromAddress': 'billing@example.com' } });
    }
    expect(poolEmail(template)).toEqual({ EmailSendingAccount: 'DEVELOPER', From: 'billing@example.com', SourceArn: identityArn('example.com') });
  });

  it('validates the context: an address, a plain display name, the identity the address or its domain, and EMAIL_FROM only through emailFrom', () => {
    const props = (context: Record<string, unknown>) => stackPropsFromContext(testApp(context, { bundle: false }).node);
    expect(() => props({ emailFrom: 'billing' })).toThrow(/context emailFrom must be an email address/);
    expect(() => props({ emailFromName: 'Billing' })).toThrow(/emailFromName and emailIdentity need emailFrom/);
    expect(() => props({ emailFrom: 'billing@example.com', emailFromName: 'Evil <x@y.z>' })).toThrow(/context emailFromName must not contain/);
    expect(() => props({ emailFrom: 'billing@example.com', emailFromName: 'Café' })).toThrow(/context emailFromName must be 1 to 64 printable ASCII/);
    expect(() => synthTemplate({ emailFrom: 'billing@example.com', emailIdentity: 'other.example' })).toThrow(
      /emailIdentity other.example must be emailFrom \(billing@example.com\) or its domain/,
    );
    expect(() => props({ functionSettings: { EMAIL_FROM: 'billing@example.com' } })).toThrow(/names EMAIL_FROM, which is set by the stack/);
    expect(props({ emailFrom: 'billing@example.com' }).email).toEqual({ from: 'billing@example.com', fromName: undefined, identity: undefined });
  });
});
