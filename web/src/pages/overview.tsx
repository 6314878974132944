import type { Account } from '../api/types';
import { Page } from '../components/page';
import { QuickStart } from '../components/quick-start';
import { ErrorNotice, Loading } from '../components/status';
import { useServices } from '../context';
import { formatCount, formatUsd } from '../format/money';
import { useResource } from '../hooks';
import { href } from '../router';

/** Balances at a glance (free tokens, credit, held, this month's spend), limits, and the quick start. */
export function OverviewPage() {
  const { api } = useServices();
  const account = useResource(() => api.account());
  return (
    <Page title="Overview" description="Your balance, this month's spend and how to connect.">
      {account.state === 'error' && <ErrorNotice message={account.error} onRetry={account.reload} />}
      {account.data ? <Balances account={account.data} /> : account.state === 'loading' && <Loading label="Loading your balance…" />}
      <QuickStart baseUrl={`${location.origin}/v1`} />
    </Page>
  );
}

/** The note under "Free tokens left": why a sign-up got none, when it got none. */
function grantNote(withheld: Account['free_grant_withheld']): string {
  if (withheld === 'disposable_domain') return 'None at sign-up: addresses on disposable email domains get no free tokens. Add credit to start.';
  if (withheld === 'already_granted') return 'None at sign-up: this email address already had its free tokens.';
  if (withheld === 'ip_limit') return 'None at sign-up: your network had reached its daily number of sign-ups with free tokens. Add credit to start.';
  return 'Used before credit, prompt tokens first.';
}

function Balances({ account }: { account: Account }) {
  const heldParts = [
    account.credit_held_nano_usd > 0 || account.free_tokens_held === 0 ? formatUsd(account.credit_held_nano_usd) : undefined,
    account.free_tokens_held > 0 ? `${formatCount(account.free_tokens_held)} tokens` : undefined,
  ].filter(Boolean);
  return (
    <>
      <section aria-labelledby="balance-title">
        <h2 id="balance-title" class="visually-hidden">
          Balance
        </h2>
        <dl class="stats">
          <div class="stat">
            <dt>Free tokens left</dt>
            <dd class="stat-value">{formatCount(account.free_tokens)}</dd>
            <dd class="stat-note">{grantNote(account.free_grant_withheld)}</dd>
          </div>
          <div class="stat">
            <dt>Credit</dt>
            <dd class="stat-value">{formatUsd(account.credit_nano_usd)}</dd>
            <dd class="stat-note">
              Available to spend now.
              {account.payments_enabled && (
                <>
                  {' '}
                  <a href={href('credits')}>Add credit</a>
                </>
              )}
            </dd>
          </div>
          <div class="stat">
            <dt>Held</dt>
            <dd class="stat-value">{heldParts.join(' + ')}</dd>
            <dd class="stat-note">Reserved by requests in progress, released when they finish.</dd>
          </div>
          <div class="stat">
            <dt>This month</dt>
            <dd class="stat-value">{formatUsd(account.month_usage_nano_usd)}</dd>
            <dd class="stat-note">Spent since the 1st (UTC). All time: {formatUsd(account.total_usage_nano_usd)}.</dd>
          </div>
        </dl>
      </section>
      <section class="card" aria-labelledby="account-title">
        <h2 id="account-title">Account</h2>
        <dl class="facts">
          <div>
            <dt>API keys</dt>
            <dd>
              {account.key_count} of {account.key_limit} · <a href={href('keys')}>Manage keys</a>
            </dd>
          </div>
          <div>
            <dt>Plan</dt>
            <dd>{account.is_free_tier ? 'Free tier (no credit bought yet)' : 'Paid'}</dd>
          </div>
          <div>
            <dt>Rate limit</dt>
            <dd>
              {account.rate_limit.requests_per_minute ? `${formatCount(account.rate_limit.requests_per_minute)} requests per minute` : 'No per-minute limit'}
              {', '}
              {account.rate_limit.concurrent_requests ? `${formatCount(account.rate_limit.concurrent_requests)} at a time` : 'no concurrency limit'}
            </dd>
          </div>
        </dl>
      </section>
    </>
  );
}
