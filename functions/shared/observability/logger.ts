import { Logger } from '@aws-lambda-powertools/logger';
import { setting } from '../config/env';

/**
 * The one Powertools Logger of a container: JSON lines with service name, cold-start flag and the
 * request's keys. Never log an API key, an upstream key or message text: log ids, models, providers,
 * token counts and timings (ms) only. Its service name is `POWERTOOLS_SERVICE_NAME` (config/env.ts),
 * read when the logger is made, at module load.
 */
export const logger = new Logger({ serviceName: setting('POWERTOOLS_SERVICE_NAME') });
