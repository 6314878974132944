import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { accountGetCommand, accountPutItem, accountUpdateCommand, accountUpdateItem, ACCOUNT_ITEM_ATTRIBUTES } from '../../functions/shared/store/account-item';
import { UpdateBuilder } from '../../functions/shared/store/update-builder';

const ROOT = resolve(__dirname, '../..');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return name.endsWith('.ts') ? [path] : [];
  });
}

describe('the accounts table has one owner (store/account-item.ts)', () => {
  it('is the only file of functions/ that names the accounts table', () => {
    const naming = sourceFiles(join(ROOT, 'functions'))
      .filter((f) => /\b(tableNames\(\)|tables|t)\.accounts\b/.test(readFileSync(f, 'utf8')))
      .map((f) => relative(ROOT, f));
    expect(naming).toEqual(['functions/shared/store/account-item.ts']);
  });

  it('refuses an update, condition, put or projection naming an attribute it does not declare', () => {
    expect(() => accountUpdateCommand('acct_x', { UpdateExpression: 'ADD bogusNanoUsd :n', ExpressionAttributeValues: { ':n': 1 } })).toThrow(
      /unknown attribute bogusNanoUsd/,
    );
    expect(() =>
      accountUpdateItem('acct_x', {
        UpdateExpression: 'SET #a = :v',
        ConditionExpression: 'attribute_exists(#b)',
        ExpressionAttributeNames: { '#a': 'creditNanoUsd', '#b': 'surprise' },
        ExpressionAttributeValues: { ':v': 1 },
      }),
    ).toThrow(/unknown attribute surprise/);
    expect(() => accountPutItem({ Item: { accountId: 'acct_x', creditNanoUsd: 0, extra: 1 } })).toThrow(/unknown attribute extra/);
    expect(() => accountGetCommand('acct_x', { projection: 'accountId, secretThing' })).toThrow(/unknown attribute secretThing/);
    expect(() => accountUpdateCommand('acct_x', { UpdateExpression: 'SET #x = :v', ExpressionAttributeValues: { ':v': 1 } })).toThrow(
      /#x .* no ExpressionAttributeNames/,
    );
  });

  it('passes the writes billing makes: nested map paths, functions, the monthly auto top-up counter', () => {
    const b = new UpdateBuilder();
    b.add(b.path('keys', 'abcdef0123456789', 'usedNanoUsd'), 5);
    b.add(b.name('autoTopUpCents_202612'), 500);
    b.when(`attribute_exists(${b.path('holds', 'req_1')}) AND size(${b.name('holds')}) > ${b.value(0)}`);
    b.remove(b.path('holds', 'req_1'));
    const command = accountUpdateCommand('acct_x', {
      ...b.build(),
      UpdateExpression: `${b.build().UpdateExpression}, creditNanoUsd = if_not_exists(creditNanoUsd, :z) + :c`,
    });
    expect(command.input).toMatchObject({ TableName: expect.any(String), Key: { accountId: 'acct_x' } });
    expect(() =>
      accountUpdateCommand('acct_x', {
        UpdateExpression: 'SET keyCount = keyCount + :one, #keys.#h = :s',
        ExpressionAttributeNames: { '#keys': 'keys', '#h': 'h16' },
      }),
    ).not.toThrow();
  });

  it('declares each attribute with what it holds', () => {
    for (const [attr, doc] of Object.entries(ACCOUNT_ITEM_ATTRIBUTES)) expect(doc.length, attr).toBeGreaterThan(10);
  });
});
