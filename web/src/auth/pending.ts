/**
 * State handed from one sign-in page to the next, in memory only: the email being confirmed, the
 * password just chosen (so confirming the email signs the user in without typing it again; never
 * stored), and a one-time message for the next page.
 */
export const pending: { email: string; password: string | undefined; flash: string | undefined } = {
  email: '',
  password: undefined,
  flash: undefined,
};

/** Takes the one-time message (it is shown once). */
export function takeFlash(): string | undefined {
  const message = pending.flash;
  pending.flash = undefined;
  return message;
}
