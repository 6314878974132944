/**
 * The one place modelmux sends email from: Amazon SES v2 `SendEmail` (docs.aws.amazon.com/ses/latest/APIReference-V2/API_SendEmail.html)
 * with the official `@aws-sdk/client-sesv2`, from `EMAIL_FROM` (an address of a verified SES identity,
 * config/env.ts). Without `EMAIL_FROM` email is off: logged once, nothing sent, nothing breaks. The SDK
 * finds another endpoint through its standard `AWS_ENDPOINT_URL_SESV2` variable (`npm start`: the local
 * SES stand-in, local/mail/). Mails are plain text: what happened, the numbers, where to act.
 */
import { SendEmailCommand, SESv2Client } from '@aws-sdk/client-sesv2';
import { config } from '../config/env';
import { logger } from '../observability/logger';

/** One mail: recipient, subject and plain-text body. */
export interface Email {
  to: string;
  subject: string;
  text: string;
}

/** What became of a mail: sent (with SES's message id), off (no `EMAIL_FROM`), or failed (logged). */
export type EmailOutcome = { sent: true; messageId: string | undefined } | { sent: false; reason: 'disabled' | 'failed' };

let client: SESv2Client | undefined;
let disabledLogged = false;

/**
 * Sends `email` through SES. Never throws: a mail is a notice, never a reason for a payment or a
 * settle to fail; a failure is logged (`email not sent`) with SES's error.
 */
export async function sendEmail(email: Email): Promise<EmailOutcome> {
  const from = config().EMAIL_FROM;
  if (from === undefined) {
    if (!disabledLogged) logger.info('email is off: EMAIL_FROM is not set (README, Configuration)', { subject: email.subject });
    disabledLogged = true;
    return { sent: false, reason: 'disabled' };
  }
  client ??= new SESv2Client({ maxAttempts: 3 });
  try {
    const out = await client.send(
      new SendEmailCommand({
        FromEmailAddress: from,
        Destination: { ToAddresses: [email.to] },
        Content: { Simple: { Subject: { Data: email.subject, Charset: 'UTF-8' }, Body: { Text: { Data: email.text, Charset: 'UTF-8' } } } },
      }),
    );
    return { sent: true, messageId: out.MessageId };
  } catch (err) {
    logger.error('email not sent', { subject: email.subject, error: err as Error });
    return { sent: false, reason: 'failed' };
  }
}
