/**
 * The per-network limit of free grants: at most `SIGNUP_GRANTS_PER_IP_PER_DAY` new self-serve accounts
 * a UTC day get the free tokens from one client network, counted in one counter item per network and
 * day in the accounts table:
 *
 * - the network is the client's IPv4 address (/32), or the /64 of its IPv6 address: one home's or one
 *   phone's connection is given a /64 (RFC 6177, "IPv6 Address Assignment to End Sites"), and its
 *   device picks any address inside it (RFC 8981, temporary addresses), so counting /128s would count
 *   nothing;
 * - the counter item `signupIp#<network>#<YYYY-MM-DD>` is taken by an UpdateItem in the account's own
 *   creation transaction (self-serve-account.ts): `ADD grants 1` only while `grants < limit`. So the
 *   slot, the account and the grant marker are written together or not at all: racing sign-ups at the
 *   limit cannot both get the grant, and a sign-up that fails (or is withheld for another reason)
 *   takes no slot;
 * - a fixed window (the UTC day), not a sliding 24 h: one conditional write and no read. A network can
 *   so get up to 2 × limit grants within 24 h that straddle midnight UTC;
 * - the item carries the accounts table's TTL attribute ({@link COUNTER_TTL_ATTRIBUTE}, a day after
 *   its window ends), so DynamoDB deletes it (TTL deletion is free and may lag by days: the window is
 *   in the key, never in the TTL, so a late deletion changes nothing).
 */
import { isIPv4, isIPv6 } from 'node:net';
import { SIGNUP_NETWORK_HAS_ROOM } from '../store/conditions';
import { ACCOUNTS_TTL_ATTRIBUTE } from '../store/table-schemas';
import { accountUpdateItem } from '../store/account-item';
import type { TransactItems } from '../store/transact-write';

/** The accounts table's TTL attribute (epoch seconds) on a counter item. */
const COUNTER_TTL_ATTRIBUTE = ACCOUNTS_TTL_ATTRIBUTE;

const DAY_MS = 86_400_000;

/**
 * The network an address counts in: an IPv4 address as it is (`203.0.113.9`); an IPv6 address as its
 * /64 in canonical form (`2001:db8:1:2::/64`, RFC 5952 lower case, no leading zeros), an IPv4-mapped
 * one (`::ffff:203.0.113.9`) as its IPv4 address. A zone (`%eth0`) is ignored.
 * @returns undefined when `address` is no IP address (nothing is counted then).
 */
export function signupNetwork(address: string): string | undefined {
  const ip = address.trim().split('%')[0] ?? '';
  if (isIPv4(ip)) return ip;
  if (!isIPv6(ip)) return undefined;
  const groups = ipv6Groups(ip);
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) {
    const [hi = 0, lo = 0] = groups.slice(6);
    return [hi >> 8, hi & 0xff, lo >> 8, lo & 0xff].join('.');
  }
  const prefix = groups.slice(0, 4).map((g) => g.toString(16));
  while (prefix.length > 0 && prefix[prefix.length - 1] === '0') prefix.pop();
  return `${prefix.join(':')}::/64`;
}

/** The 8 16-bit groups of a valid IPv6 address (`::` expanded, a trailing dotted quad as two groups). */
function ipv6Groups(ip: string): number[] {
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(ip);
  const text = dotted
    ? `${ip.slice(0, dotted.index)}${((Number(dotted[1]) << 8) | Number(dotted[2])).toString(16)}:${((Number(dotted[3]) << 8) | Number(dotted[4])).toString(16)}`
    : ip;
  const [head = '', tail] = text.split('::');
  const parse = (part: string) => (part === '' ? [] : part.split(':').map((g) => parseInt(g, 16)));
  const left = parse(head);
  const right = tail === undefined ? [] : parse(tail);
  return [...left, ...Array<number>(8 - left.length - right.length).fill(0), ...right];
}

/** The id (pk) of the counter item of `network` for the UTC day of `now` (epoch ms). */
export function signupCounterId(network: string, now: number): string {
  return `signupIp#${network}#${new Date(now).toISOString().slice(0, 10)}`;
}

/**
 * The transaction item that takes one of `network`'s `limit` grant slots for the UTC day of `now`
 * (epoch ms): an Update of its counter item, cancelled (`ConditionalCheckFailed`) when the day's
 * `limit` slots are taken.
 */
export function signupSlotUpdate(network: string, limit: number, now: number): TransactItems[number] {
  const dayEnd = Math.floor(now / DAY_MS) * DAY_MS + DAY_MS;
  return accountUpdateItem(signupCounterId(network, now), {
    UpdateExpression: 'ADD #grants :one SET #ttl = if_not_exists(#ttl, :ttl), #network = :network',
    ConditionExpression: SIGNUP_NETWORK_HAS_ROOM,
    ExpressionAttributeNames: { '#grants': 'grants', '#ttl': COUNTER_TTL_ATTRIBUTE, '#network': 'network' },
    ExpressionAttributeValues: { ':one': 1, ':limit': limit, ':ttl': Math.floor((dayEnd + DAY_MS) / 1000), ':network': network },
  });
}
