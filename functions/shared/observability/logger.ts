import { Logger } from '@aws-lambda-powertools/logger';

/**
 * The one Powertools Logger of a container: JSON lines with service name, cold-start flag and the
 * request's keys. Never log an API key, an upstream key or message text: log ids, models, providers,
 * token counts and timings (ms) only.
 */
export const logger = new Logger({ serviceName: process.env.POWERTOOLS_SERVICE_NAME ?? 'modelmux' });
