import { RemovalPolicy, Validations } from 'aws-cdk-lib';
import { AttributeType, BillingMode, type Attribute, type ITable, ProjectionType, Table, TableEncryption } from 'aws-cdk-lib/aws-dynamodb';
import { Effect, type IGrantable, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { Construct } from 'constructs';
import {
  ACCOUNTS_TABLE,
  LEGACY_BY_EMAIL_INDEX,
  PENDING_HOLDS_INDEX,
  TABLE_ENV,
  TABLE_SCHEMAS,
  type KeyAttribute,
  type TableSchema,
} from '../../functions/shared/store/table-schemas';

type LogicalName = TableSchema['logicalName'];

/**
 * DynamoDB actions the gateway functions perform at request time, per table. No wildcards, and nothing
 * the request path does not do. Inside TransactWriteItems each item is authorised by its own action
 * (Put -> PutItem, Update -> UpdateItem, Delete -> DeleteItem, ConditionCheck -> ConditionCheckItem;
 * DynamoDB Developer Guide, "Using IAM with DynamoDB transactions"), so TransactWriteItems itself needs
 * no grant.
 * - keys: GetItem to resolve the key hash; GetItem + ConditionCheckItem to add a key's billing entry to
 *   an account written before per-key state (accounts/keys/key-account-entry.ts). Creating, listing and revoking keys
 *   is the admin CLI's job (and the account API's): not granted here.
 * - accounts: GetItem (the view a hold is planned from), UpdateItem (the hold with its inline record,
 *   the settle's release, a cancel; each guarded by its own conditions).
 * - ledger: PutItem (the settle's ledger entry, in the settle's transaction), GetItem (a cancel of a hold
 *   already settled reads what its settle charged), Query (a lease a stopped container left past its
 *   expiry is charged the entries of its account's partition that name it: billing/lease-reclaim.ts).
 *   Nothing is written to the ledger at hold time.
 * test/lib/gateway-grants.test.ts records what the request path really calls and holds this list to it.
 */
export const GATEWAY_TABLE_ACTIONS: Readonly<Record<Exclude<LogicalName, 'responses'>, readonly string[]>> = {
  keys: ['dynamodb:GetItem', 'dynamodb:ConditionCheckItem'],
  accounts: ['dynamodb:GetItem', 'dynamodb:UpdateItem'],
  ledger: ['dynamodb:PutItem', 'dynamodb:GetItem', 'dynamodb:Query'],
};

/**
 * DynamoDB actions on the responses table (stored Responses API responses), granted to the chat
 * function only: it alone serves `/v1/responses` (CloudFront sends only `/v1/embeddings*` to the
 * embeddings function). BatchGetItem (every read: a response and its parts, the responses an
 * `item_reference` names, strongly consistent), PutItem (store a response and its parts), DeleteItem
 * (`DELETE /v1/responses/{id}`). No Query, no Scan: every read is by key, within the caller's account.
 * test/integration/stored-responses.test.ts holds this list to what the code calls.
 */
export const RESPONSES_TABLE_ACTIONS: readonly string[] = ['dynamodb:BatchGetItem', 'dynamodb:PutItem', 'dynamodb:DeleteItem'];

/**
 * What the settle function does (queued settles and balance messages, the orphan sweep), per table and
 * index; transaction items are authorised by their own actions, as above. No Scan.
 * - accounts: UpdateItem (a settle's debit and release, a cancel, a lease's reconcile, a balance
 *   crossing's marker, an auto top-up paused; the marker of an item left without holds cleared:
 *   billing/hold-record.ts), BatchGetItem (the `holds` maps of the items the sweep's index names),
 *   GetItem (the balance watch after a queued bill reads the account, which this container placed no
 *   hold on: billing/balance-watch.ts; an account email reads its address: notify/account-emails.ts).
 * - accounts' sparse `pendingHolds` index: Query (the sweep finds holds in flight).
 * - ledger: PutItem (a settle's ledger entry, alone for a leased request), GetItem (a cancel of a hold
 *   settled before reads what it charged), Query (an orphaned lease is charged the entries of its
 *   account's partition that name it: billing/lease-settle.ts `reconcileLease`).
 * - keys' `byAccount` index: Query (an orphan's full key hash).
 * test/lib/settle-grants.test.ts records what the settle function really calls and holds this list to it.
 */
export const SETTLE_TABLE_ACTIONS = {
  accounts: ['dynamodb:UpdateItem', 'dynamodb:BatchGetItem', 'dynamodb:GetItem'],
  accountsPendingHoldsIndex: ['dynamodb:Query'],
  ledger: ['dynamodb:PutItem', 'dynamodb:GetItem', 'dynamodb:Query'],
  keysByAccountIndex: ['dynamodb:Query'],
} as const;

/**
 * DynamoDB actions of the account function (the account API), per table. Transaction items are
 * authorised by their own actions, as above. Query is granted on the index it reads.
 * - keys: GetItem (one key), PutItem (create, in the key's transaction), UpdateItem (rename, disable,
 *   limit, delete), ConditionCheckItem (a key's entry added to a fund shard that lacks it, only while
 *   the row is unchanged: accounts/keys/key-account-entry.ts), Query on `byAccount` (listing).
 * - accounts: GetItem (account and fund shards, key entries, BYOK map), PutItem (first-call creation and
 *   the free-grant marker), UpdateItem (keyCount and `keys.<h16>` on every fund shard with a key; BYOK
 *   entries; the sign-up counter of the client's network, accounts/signup-network.ts).
 * - ledger: Query (month usage, activity).
 */
export const ACCOUNT_TABLE_ACTIONS: Readonly<
  Record<Exclude<LogicalName, 'responses'>, { table: readonly string[]; index?: { name: string; actions: readonly string[] } }>
> = {
  keys: {
    table: ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:ConditionCheckItem'],
    index: { name: 'byAccount', actions: ['dynamodb:Query'] },
  },
  accounts: { table: ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem'] },
  ledger: { table: ['dynamodb:Query'] },
};

/** Props of {@link DataTables}. */
export interface DataTablesProps {
  /**
   * What happens to the tables when they leave the stack. Default RETAIN for all: accounts and
   * ledger hold money; keys is retained too, because losing it silently revokes every key and breaks the
   * invariant accounts.keyCount == number of keys; stored responses are customers' data whose end is
   * their TTL, not a stack update. Tests and throwaway stacks may pass DESTROY.
   */
  readonly removalPolicy?: RemovalPolicy;
  /**
   * Tables restored outside the stack (bin/restore-tables.ts) to use instead of the stack's own, by
   * logical name. The stack's own then leave it (RETAIN: they stay in the account, and keep deletion
   * protection); the restored ones are referenced by name, with the same grants, alarms and backups.
   */
  readonly restoredTables?: Readonly<Partial<Record<'keys' | 'accounts' | 'ledger', string>>>;
  /**
   * Keep the accounts table's old `byEmail` index (projection ALL) beside `byEmailKeys`: step 1 of the
   * upgrade (CloudFormation creates or deletes one index per update; README, "Runbook": upgrading to byEmailKeys).
   */
  readonly legacyEmailIndex?: boolean;
}

/**
 * The four tables, built from {@link TABLE_SCHEMAS} (the same data the local DynamoDB creator reads, so
 * deployed and local keys never drift): on-demand billing (scales to zero), point-in-time recovery
 * (35 days of restore points; not on the responses table, whose data must end at its TTL or DELETE),
 * encryption at rest with the AWS-managed key (`aws/dynamodb`), DynamoDB TTL where the schema names an
 * attribute. Physical names are CloudFormation-generated, so two stacks can live in one account;
 * functions find them via env.
 */
export class DataTables extends Construct {
  /** Tables by logical name. */
  readonly tables: Readonly<Record<LogicalName, ITable>>;

  constructor(scope: Construct, id: string, props: DataTablesProps = {}) {
    super(scope, id);
    const removalPolicy = props.removalPolicy ?? RemovalPolicy.RETAIN;
    const built: Partial<Record<LogicalName, ITable>> = {};
    for (const schema of TABLE_SCHEMAS) {
      const restored = (props.restoredTables as Partial<Record<LogicalName, string>> | undefined)?.[schema.logicalName];
      const withLegacy =
        props.legacyEmailIndex === true && schema === ACCOUNTS_TABLE
          ? {
              ...schema,
              globalSecondaryIndexes: [
                { indexName: LEGACY_BY_EMAIL_INDEX, partitionKey: { name: 'email', type: 'S' as const } },
                ...(schema.globalSecondaryIndexes ?? []),
              ],
            }
          : schema;
      built[schema.logicalName] =
        restored === undefined ? buildTable(this, withLegacy, removalPolicy) : Table.fromTableName(this, `${capitalise(schema.logicalName)}Restored`, restored);
    }
    this.tables = built as Record<LogicalName, ITable>;
  }

  /** `KEYS_TABLE`, `ACCOUNTS_TABLE`, `LEDGER_TABLE` -> physical table name (tokens until deploy). */
  get environment(): Record<string, string> {
    const env: Record<string, string> = {};
    for (const schema of TABLE_SCHEMAS) env[TABLE_ENV[schema.logicalName]] = this.tables[schema.logicalName].tableName;
    return env;
  }

  /**
   * Grants a gateway function exactly {@link GATEWAY_TABLE_ACTIONS}: one explicit statement per table,
   * resource = that table's ARN (no index ARNs: the request path never queries the GSI).
   */
  grantGatewayAccess(grantee: IGrantable): void {
    for (const [name, actions] of Object.entries(GATEWAY_TABLE_ACTIONS) as Array<[keyof typeof GATEWAY_TABLE_ACTIONS, readonly string[]]>) {
      grantee.grantPrincipal.addToPrincipalPolicy(
        new PolicyStatement({
          sid: `Gateway${capitalise(name)}Table`,
          effect: Effect.ALLOW,
          actions: [...actions],
          resources: [this.tables[name].tableArn],
        }),
      );
    }
  }

  /** Grants exactly {@link RESPONSES_TABLE_ACTIONS} on the responses table (the chat function's). */
  grantResponsesAccess(grantee: IGrantable): void {
    grantee.grantPrincipal.addToPrincipalPolicy(
      new PolicyStatement({
        sid: 'GatewayResponsesTable',
        effect: Effect.ALLOW,
        actions: [...RESPONSES_TABLE_ACTIONS],
        resources: [this.tables.responses.tableArn],
      }),
    );
  }

  /** Grants the settle function exactly {@link SETTLE_TABLE_ACTIONS}: one statement per table, and one per index it queries. */
  grantSettleAccess(grantee: IGrantable): void {
    const statement = (sid: string, actions: readonly string[], resource: string) =>
      grantee.grantPrincipal.addToPrincipalPolicy(new PolicyStatement({ sid, effect: Effect.ALLOW, actions: [...actions], resources: [resource] }));
    statement('SettleAccountsTable', SETTLE_TABLE_ACTIONS.accounts, this.tables.accounts.tableArn);
    statement('SettleAccountsPendingHolds', SETTLE_TABLE_ACTIONS.accountsPendingHoldsIndex, `${this.tables.accounts.tableArn}/index/${PENDING_HOLDS_INDEX}`);
    statement('SettleLedgerTable', SETTLE_TABLE_ACTIONS.ledger, this.tables.ledger.tableArn);
    statement('SettleKeysByAccount', SETTLE_TABLE_ACTIONS.keysByAccountIndex, `${this.tables.keys.tableArn}/index/byAccount`);
  }
}
/**
 * Grants the account function exactly {@link ACCOUNT_TABLE_ACTIONS} (a module-level helper so the class
 * stays as it was): one statement per table, and one per index it queries.
 */
export function grantAccountAccess(tables: DataTables, grantee: IGrantable): void {
  for (const [name, grant] of Object.entries(ACCOUNT_TABLE_ACTIONS) as Array<[keyof typeof ACCOUNT_TABLE_ACTIONS, (typeof ACCOUNT_TABLE_ACTIONS)['keys']]>) {
    const table = tables.tables[name];
    grantee.grantPrincipal.addToPrincipalPolicy(
      new PolicyStatement({ sid: `Account${capitalise(name)}Table`, effect: Effect.ALLOW, actions: [...grant.table], resources: [table.tableArn] }),
    );
    if (grant.index) {
      grantee.grantPrincipal.addToPrincipalPolicy(
        new PolicyStatement({
          sid: `Account${capitalise(name)}Index`,
          effect: Effect.ALLOW,
          actions: [...grant.index.actions],
          resources: [`${table.tableArn}/index/${grant.index.name}`],
        }),
      );
    }
  }
}

function buildTable(scope: Construct, schema: TableSchema, removalPolicy: RemovalPolicy): Table {
  const table = new Table(scope, capitalise(schema.logicalName), {
    partitionKey: toAttribute(schema.partitionKey),
    sortKey: schema.sortKey && toAttribute(schema.sortKey),
    billingMode: BillingMode.PAY_PER_REQUEST,
    pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: schema.pointInTimeRecovery ?? true },
    ...(schema.timeToLiveAttribute !== undefined ? { timeToLiveAttribute: schema.timeToLiveAttribute } : {}),
    encryption: TableEncryption.AWS_MANAGED,
    // With RETAIN, also refuse DeleteTable from the console/API: the money must survive a slip too.
    deletionProtection: removalPolicy === RemovalPolicy.RETAIN,
    removalPolicy,
  });
  if (schema.pointInTimeRecovery === false) {
    Validations.of(table).acknowledge({
      id: 'AwsSolutions::AwsSolutions-DDB3',
      reason:
        'Stored Responses API responses are customer data that must end at their TTL or DELETE; restore points would keep them 35 days longer. Losing them loses conversation continuity, not money.',
    });
  }
  for (const index of schema.globalSecondaryIndexes ?? []) {
    table.addGlobalSecondaryIndex({
      indexName: index.indexName,
      partitionKey: toAttribute(index.partitionKey),
      sortKey: index.sortKey && toAttribute(index.sortKey),
      projectionType: index.projection === 'KEYS_ONLY' ? ProjectionType.KEYS_ONLY : ProjectionType.ALL,
    });
  }
  return table;
}

function toAttribute(key: KeyAttribute): Attribute {
  return { name: key.name, type: key.type === 'S' ? AttributeType.STRING : AttributeType.NUMBER };
}

function capitalise(word: string): string {
  return word.charAt(0).toUpperCase() + word.slice(1);
}
