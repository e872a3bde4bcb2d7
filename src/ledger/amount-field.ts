import { ApiError } from '../http/failures.js';
import { amountRule, formatMinor, readAmount, type Currency, type Minor } from '../money.js';

/**
 * An amount field of a request, in `currency`: refused with code 300 naming the field and the rule
 * when it is not plain decimal text with the currency's places, or is below `minimum` (default: > 0).
 */
export function amountField(
  field: string,
  input: unknown,
  currency: Currency,
  options: { decimals?: number; minimum?: Minor; maximum?: Minor; signed?: boolean } = {},
): Minor {
  const rule = amountRule(currency, options);
  const amount = readAmount(input, rule);
  if (amount !== undefined) return amount;
  throw new ApiError({
    kind: 'invalid_field',
    field,
    rule: {
      rule: 'amount',
      decimals: rule.decimals,
      minimum: formatMinor(rule.minimum, rule.decimals),
      maximum: formatMinor(rule.maximum, rule.decimals),
      signed: rule.signed,
    },
  });
}
