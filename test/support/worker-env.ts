/**
 * vitest setupFiles: runs in each test worker before the test file's imports, so every store module
 * sees DynamoDB Local. Credentials are forced to dummies so no test can ever reach a real AWS account.
 * The unit and stack tiers start no DynamoDB Local (vitest.config.ts): there the store points at a
 * closed loopback port, so a test that reaches the store fails at once instead of finding a database.
 */
import { inject } from 'vitest';

process.env.DYNAMODB_ENDPOINT = inject('dynamodbEndpoint') ?? 'http://127.0.0.1:9';
process.env.AWS_REGION = 'us-east-1';
process.env.AWS_ACCESS_KEY_ID = 'local';
process.env.AWS_SECRET_ACCESS_KEY = 'local';
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true'; // Node 20 end-of-support notice: noise in test output
delete process.env.AWS_SESSION_TOKEN;
delete process.env.AWS_PROFILE;
// The gateway's JSON request logs would bury test output; tests assert behaviour, not log lines.
process.env.POWERTOOLS_LOG_LEVEL ??= 'SILENT';
// Rate limits are off in tests unless a test sets them (test/integration/rate-limits.test.ts tests the
// defaults and the limits): most files send many requests with one dev key, which the free-tier
// default (20 requests per minute) would refuse.
process.env.RATE_LIMIT_RPM ??= '0';
process.env.RATE_LIMIT_CONCURRENT ??= '0';
process.env.RATE_LIMIT_FREE_RPM ??= '0';
process.env.RATE_LIMIT_FREE_CONCURRENT ??= '0';
// DynamoDB Local serialises transactions; under a loaded CI machine a 3 s request timeout is too short.
process.env.DYNAMODB_REQUEST_TIMEOUT_MS ??= '10000';
// EMF metric lines (one per invocation) on stdout would bury test output too; the metrics tests turn
// them back on for themselves (test/observability/metrics.test.ts).
process.env.POWERTOOLS_METRICS_DISABLED ??= 'true';
