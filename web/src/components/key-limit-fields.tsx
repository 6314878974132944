import type { LimitReset } from '../api/types';
import { Field, valueOf } from './field';

/** The reset choices, as the API names them, with what each means (DATA-MODEL §2 windows, UTC). */
export const RESET_CHOICES: ReadonlyArray<{ value: LimitReset | ''; label: string }> = [
  { value: '', label: 'Never (a total limit)' },
  { value: 'daily', label: 'Daily (00:00 UTC)' },
  { value: 'weekly', label: 'Weekly (Monday 00:00 UTC)' },
  { value: 'monthly', label: 'Monthly (the 1st, 00:00 UTC)' },
];

/** "per day" etc. for a limit's window. */
export function windowWords(reset: LimitReset | null): string {
  switch (reset) {
    case 'daily':
      return 'per day';
    case 'weekly':
      return 'per week';
    case 'monthly':
      return 'per month';
    default:
      return 'in total';
  }
}

/** Form state of a key's name and limit: the limit as typed (USD) and the reset. */
export interface KeyFormValues {
  name: string;
  limit: string;
  reset: LimitReset | '';
}

/**
 * Checks the form before it is sent: the name is required (at most 100 characters); the limit is
 * empty (no limit) or a number of USD ≥ 0. The API checks again and its message wins.
 * Returns the first problem, or undefined.
 */
export function keyFormProblem(values: KeyFormValues): { field: 'name' | 'limit'; message: string } | undefined {
  const name = values.name.trim();
  if (name === '') return { field: 'name', message: 'Give the key a name, e.g. the app or machine that uses it.' };
  if (name.length > 100) return { field: 'name', message: 'Keep the name to 100 characters or fewer.' };
  if (values.limit.trim() !== '') {
    const limit = Number(values.limit);
    if (!Number.isFinite(limit) || limit < 0) return { field: 'limit', message: 'The limit is an amount in US dollars, like 5 or 12.50.' };
  }
  return undefined;
}

/** The limit in USD for the API: null when empty. Call after {@link keyFormProblem} passed. */
export function limitOf(values: KeyFormValues): number | null {
  return values.limit.trim() === '' ? null : Number(values.limit);
}

/** Name, limit and reset fields, shared by "create" and "edit". `idPrefix` keeps ids unique on the page. */
export function KeyFields(props: {
  idPrefix: string;
  values: KeyFormValues;
  onChange: (values: KeyFormValues) => void;
  problem?: { field: 'name' | 'limit'; message: string } | undefined;
}) {
  const { idPrefix: p, values, onChange, problem } = props;
  return (
    <div class="key-fields">
      <Field id={`${p}-name`} label="Name" error={problem?.field === 'name' ? problem.message : undefined}>
        {(d) => (
          <input
            id={`${p}-name`}
            name="name"
            type="text"
            required
            maxLength={100}
            autoComplete="off"
            placeholder="e.g. production server"
            value={values.name}
            onInput={(e) => onChange({ ...values, name: valueOf(e) })}
            aria-describedby={d}
            aria-invalid={problem?.field === 'name'}
          />
        )}
      </Field>
      <Field
        id={`${p}-limit`}
        label="Spend limit, USD (optional)"
        hint="Requests are refused once the key has spent this much."
        error={problem?.field === 'limit' ? problem.message : undefined}
      >
        {(d) => (
          <input
            id={`${p}-limit`}
            name="limit"
            type="number"
            min="0"
            step="0.01"
            inputMode="decimal"
            placeholder="No limit"
            value={values.limit}
            onInput={(e) => onChange({ ...values, limit: valueOf(e) })}
            aria-describedby={d}
            aria-invalid={problem?.field === 'limit'}
          />
        )}
      </Field>
      <Field id={`${p}-reset`} label="Limit resets">
        {(d) => (
          <select
            id={`${p}-reset`}
            name="limit_reset"
            value={values.reset}
            onChange={(e) => onChange({ ...values, reset: (e.currentTarget as HTMLSelectElement).value as LimitReset | '' })}
            aria-describedby={d}
            disabled={values.limit.trim() === ''}
          >
            {RESET_CHOICES.map((c) => (
              <option key={c.value} value={c.value}>
                {c.label}
              </option>
            ))}
          </select>
        )}
      </Field>
    </div>
  );
}
