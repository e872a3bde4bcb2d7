import { defineFormat } from '../http/validation.js';
import { whitelistEntryProblem } from './ip-whitelist.js';

/** An IPv4 or IPv6 address or CIDR range, 0.0.0.0 meaning any (FieldFormat ipOrCidr). */
export const IpOrCidr = defineFormat('ipOrCidr', (value) => whitelistEntryProblem(value) === undefined);
