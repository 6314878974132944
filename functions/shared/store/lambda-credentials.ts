/**
 * The AWS SDK's default credential chain, as the Lambda bundles see it: environment variables only.
 *
 * Lambda puts the execution role's temporary credentials in `AWS_ACCESS_KEY_ID`,
 * `AWS_SECRET_ACCESS_KEY` and `AWS_SESSION_TOKEN` before INIT (Lambda Developer Guide, "Defined runtime
 * environment variables"), and `fromEnv` is the first link of the SDK's default chain anyway
 * (`@aws-sdk/credential-provider-node`, `defaultProvider`). The rest of that chain (SSO, INI files,
 * process, web identity, IMDS and the STS/SSO clients they carry) is dead code in Lambda but 140 KB of
 * the minified bundle that V8 compiles on every cold start.
 *
 * lib/constructs/gateway-function.ts aliases `@aws-sdk/credential-provider-node` to this module in the
 * esbuild step only; `npm start`, the tests and the admin CLI keep the full chain.
 */
import { fromEnv, type FromEnvInit } from '@aws-sdk/credential-provider-env';

/**
 * Stands in for `defaultProvider` of `@aws-sdk/credential-provider-node` (same call shape: the SDK
 * client calls it with its resolved config and gets a provider back).
 * @returns a provider that rejects with `CredentialsProviderError` when the variables are missing.
 */
export const defaultProvider = (init?: FromEnvInit): ReturnType<typeof fromEnv> => fromEnv(init);
