/**
 * Email locally (`npm start`, the tests): an SMTP catch-all from npm (`smtp-server`) that keeps every
 * mail as an `.eml` file in a folder (`.local/mail/`) and in memory, and a thin Amazon SES v2 stand-in
 * on loopback that answers `SendEmail` (`POST /v2/email/outbound-emails`, the JSON of
 * docs.aws.amazon.com/ses/latest/APIReference-V2/API_SendEmail.html) by relaying the mail to the
 * catch-all over SMTP with `nodemailer`. The functions' real `@aws-sdk/client-sesv2` reaches it through
 * the SDK's standard `AWS_ENDPOINT_URL_SESV2`; `EMAIL_FROM` is set unless the env has one.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { createTransport } from 'nodemailer';
import { SMTPServer } from 'smtp-server';

/** One caught mail. */
export interface CaughtMail {
  from: string;
  to: string[];
  subject: string;
  /** The raw message (headers and body). */
  raw: string;
  /** Where it was written, when a folder is kept. */
  file: string | undefined;
}

/** Options: `dir` keeps each mail as `<time>-<id>.eml` there. */
export interface LocalMailOptions {
  dir?: string;
}

/** The running catch-all and SES stand-in. */
export interface LocalMail {
  smtpPort: number;
  /** `http://127.0.0.1:<port>`: AWS_ENDPOINT_URL_SESV2. */
  sesUrl: string;
  dir: string | undefined;
  mails: CaughtMail[];
}

const header = (raw: string, name: string): string => new RegExp(`^${name}: ?(.*)$`, 'im').exec(raw)?.[1]?.trim() ?? '';

/** Starts both servers and points the functions' env at them; `closers` gets what stops them. */
export async function startLocalMail(options: LocalMailOptions | undefined, closers: Array<() => Promise<void>>): Promise<LocalMail | undefined> {
  if (options === undefined) return undefined;
  const mails: CaughtMail[] = [];
  if (options.dir !== undefined) mkdirSync(options.dir, { recursive: true });
  const smtp = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        const file =
          options.dir === undefined ? undefined : join(options.dir, `${new Date().toISOString().replace(/[:.]/g, '-')}-${randomUUID().slice(0, 8)}.eml`);
        if (file !== undefined) writeFileSync(file, raw);
        mails.push({
          from: session.envelope.mailFrom === false ? '' : session.envelope.mailFrom.address,
          to: session.envelope.rcptTo.map((r) => r.address),
          subject: header(raw, 'Subject'),
          raw,
          file,
        });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', resolve));
  const smtpPort = (smtp.server.address() as AddressInfo).port;
  closers.push(() => new Promise<void>((resolve) => smtp.close(() => resolve())));
  const relay = createTransport({ host: '127.0.0.1', port: smtpPort, secure: false, ignoreTLS: true });

  const ses = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void (async () => {
        if (req.method !== 'POST' || req.url !== '/v2/email/outbound-emails') {
          res
            .writeHead(404, { 'content-type': 'application/json', 'x-amzn-errortype': 'NotFoundException' })
            .end(JSON.stringify({ message: 'The local SES stand-in serves SendEmail only.' }));
          return;
        }
        try {
          const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as SendEmailBody;
          const simple = body.Content?.Simple;
          if (body.FromEmailAddress === undefined || !body.Destination?.ToAddresses?.length || simple === undefined)
            throw new Error('FromEmailAddress, Destination.ToAddresses and Content.Simple are required.');
          await relay.sendMail({
            from: body.FromEmailAddress,
            to: body.Destination.ToAddresses,
            subject: simple.Subject?.Data ?? '',
            text: simple.Body?.Text?.Data ?? '',
            ...(simple.Body?.Html?.Data ? { html: simple.Body.Html.Data } : {}),
          });
          res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ MessageId: `local-${randomUUID()}` }));
        } catch (err) {
          res
            .writeHead(400, { 'content-type': 'application/json', 'x-amzn-errortype': 'BadRequestException' })
            .end(JSON.stringify({ message: (err as Error).message }));
        }
      })();
    });
  });
  await new Promise<void>((resolve) => ses.listen(0, '127.0.0.1', resolve));
  const sesUrl = `http://127.0.0.1:${(ses.address() as AddressInfo).port}`;
  closers.push(async () => {
    relay.close();
    ses.closeAllConnections();
    await new Promise<void>((resolve) => ses.close(() => resolve()));
  });
  process.env.AWS_ENDPOINT_URL_SESV2 = sesUrl;
  process.env.EMAIL_FROM ??= 'modelmux <noreply@modelmux.local>';
  return { smtpPort, sesUrl, dir: options.dir, mails };
}

/** The part of SendEmail's request body the stand-in reads. */
interface SendEmailBody {
  FromEmailAddress?: string;
  Destination?: { ToAddresses?: string[] };
  Content?: { Simple?: { Subject?: { Data?: string }; Body?: { Text?: { Data?: string }; Html?: { Data?: string } } } };
}
