import { createPrivateKey } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { certificateKey, type DarajaConfig } from './rails/daraja/client.js';
import { SANDBOX_CLABE_PREFIX } from './mexico/collections.js';
import type { EfiConfig } from './rails/boleto/efi-client.js';
import type { InterConfig } from './rails/boleto/inter-client.js';
import type { ApiPixConfig } from './rails/pix/api-pix-client.js';
import { whitelistEntryProblem } from './auth/ip-whitelist.js';
import { PIX_KEY_TYPES, pixKeyProblem } from './brazil/pix-keys.js';
import { isTronAddress } from './rails/chain/addresses.js';
import { CONFIRMATIONS } from './rails/chain/rail.js';
import { ACCOUNT_PATHS, parseAccountXpub, SANDBOX_XPUBS, type AddressFamily } from './rails/chain/derivation.js';
import { CURRENCIES, CURRENCY_CODES, isCurrency, parseDecimal } from './money.js';

/** The Pix key the sandbox shows in its BR Codes until the operator sets PIX_KEY (a random key that belongs to no one). */
export const SANDBOX_PIX_KEY = '5f8e3a1c-7b2d-4e6f-9a0b-1c2d3e4f5a6b';

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

/** What Fastify accepts as trustProxy: off, on (any hop), a hop count, or trusted addresses/CIDRs. */
export type TrustProxy = boolean | number | string[];

export interface Config {
  host: string;
  port: number;
  dataDir: string;
  /** postgres://… selects PostgreSQL; undefined means the embedded SQLite file in dataDir. */
  databaseUrl: string | undefined;
  /** The break-glass root token of the admin API (every permission, every use audited); undefined: none. */
  adminToken: string | undefined;
  /** ADMIN_ROOT_TOKEN_DISABLED: the root token is refused even when set. */
  adminRootTokenDisabled: boolean;
  /** BACKOFFICE_ENABLED (default true): the staff pages under /backoffice on this node. */
  backofficeEnabled: boolean;
  /** APPROVAL_THRESHOLD: per currency, the minor amount at or above which a balance adjustment needs a second operator. */
  approvalThreshold: Readonly<Record<string, bigint>>;
  /** BACKOFFICE_LOW_WATER: per currency (or USDT), the minor amount below which the back office's Today flags a float or hot wallet. */
  backofficeLowWater: Readonly<Record<string, bigint>>;
  /** 32-byte key that encrypts API secrets at rest; undefined means the generated file in dataDir. */
  masterKey: Buffer | undefined;
  keyActivationDelayMs: number;
  signatureWindowMs: number;
  callbackRetryIntervalMs: number;
  callbackMaxRetries: number;
  callbackRetryWindowMs: number;
  callbackAllowPrivateNetworks: boolean;
  /** A callback succeeds on HTTP 200 within this time (10 s by contract; shorter only in tests). */
  callbackTimeoutMs: number;
  /** Callback deliveries in flight per process, and per target host. */
  callbackConcurrency: number;
  callbackConcurrencyPerHost: number;
  /** How often the dispatcher looks for due callbacks that no local commit announced. */
  callbackPollIntervalMs: number;
  /**
   * How long a node may take to hand an order to its rail before any node's worker may take the
   * hand-over over (asking the rail first what became of the earlier attempt).
   */
  railLeaseMs: number;
  /** How often the hand-over worker looks for hand-overs that are due (retries, leases that ran out). */
  railPollIntervalMs: number;
  /** This process as a node among others on one database (see src/nodes). */
  nodes: {
    /** How often the node writes its heartbeat (NODE_HEARTBEAT_MS). */
    heartbeatMs: number;
    /** A node whose heartbeat is older than this is dead, and its leases are freed (NODE_DEAD_AFTER_MS). */
    deadAfterMs: number;
    /** How long a SIGTERM may take, from the signal to the exit (SHUTDOWN_GRACE_MS). */
    shutdownGraceMs: number;
  };
  /** PostgreSQL: connections in this process's pool. */
  databasePoolSize: number;
  /** Run the background workers (callback dispatcher, nonce pruner) in the server process. */
  workers: boolean;
  /** Sandbox controls (admin events, cashier buttons): on by default, since every rail is a simulator until its connector is configured. */
  sandbox: boolean;
  /** The operator's Pix receiving account, as static BR Codes and dynamic charges name it. */
  pix: { key: string; merchantName: string; merchantCity: string; jwsPrivateKeyPem: string | undefined };
  /** COMPE code of the bank that issues Cashgate's boletos. */
  boletoBankCode: string;
  exchange: {
    /**
     * Account-level xpubs (m/44'/195'/0' and m/44'/60'/0') deposit addresses derive from; the
     * sandbox's published keys when unset in the sandbox. Only TRON addresses are handed out today,
     * so outside the sandbox the EVM key may stay unset.
     */
    xpubs: { tron: string; evm: string | undefined };
    /** Whether the xpubs are the published sandbox keys (start-up says so). */
    sandboxXpubs: AddressFamily[];
    /** How long a token → fiat quote waits for its deposit. */
    quoteTtlMs: number;
    /** TRON deposit addresses a worker keeps derived ahead for creates to take (0: every create derives its own). */
    depositAddressPoolSize: number;
  };
  /** The Kenya rail: the sandbox simulator, or Safaricom's Daraja. */
  kenya: KenyaRailConfig;
  /** The Brazil Pix rail: the sandbox simulator, or a PSP's API Pix. */
  brazil: BrazilRailConfig;
  /** Brazil's boletos: the sandbox simulator, or registered at Efí or Banco Inter (independent of the Pix rail). */
  boleto: BoletoRailConfig;
  /** The USDT chains: the sandbox simulator, or TRON and EVM nodes with the operator's hot wallets. */
  chain: ChainRailConfig;
  /** Mexico's aggregate cashier rails: SPEI (sandbox or STP) and OXXO (sandbox or Stripe). */
  mexico: MexicoRailConfig;
  trustProxy: TrustProxy;
  publicBaseUrl: string;
  /** Strict-Transport-Security max-age (seconds) sent on answers reached over HTTPS; 0 sends none. */
  hstsMaxAgeSeconds: number;
  /** Signed requests allowed per access key per minute (token bucket, per process). */
  rateLimitPerKeyPerMinute: number;
  logLevel: LogLevel;
  demo: boolean;
}

export type KenyaRailConfig =
  | { rail: 'sandbox' }
  | {
      rail: 'daraja';
      daraja: DarajaConfig;
      /** When an STK prompt with no callback yet is first asked after (STK Push Query). */
      stkQueryAfterMs: number;
      /** How long a B2C payout waits for its result before Daraja is asked (Transaction Status). */
      resultTimeoutMs: number;
      /** How often the reconciliation worker looks for requests due a query. */
      reconcileIntervalMs: number;
    };

export type BrazilRailConfig =
  | { rail: 'sandbox' }
  | {
      rail: 'apipix';
      apiPix: ApiPixConfig;
      /** How often the reconciliation worker lists received Pix and asks about late charges and payouts. */
      reconcileIntervalMs: number;
      /** How long a payout waits for its result webhook before the PSP is asked. */
      resultTimeoutMs: number;
    };

export interface MexicoRailConfig {
  spei:
    | { rail: 'sandbox'; clabePrefix: string }
    | {
        rail: 'stp';
        /** The 10-digit prefix of the company's CLABEs: 646 + 180 + the 4-digit company prefix. */
        clabePrefix: string;
        baseUrl: string;
        /** The consultation service (efws). */
        queryUrl: string;
        empresa: string;
        /** The encrypted PKCS#8 PEM whose certificate STP holds, and its passphrase. */
        privateKeyPem: string;
        passphrase: string | undefined;
        timeoutMs: number;
      };
  oxxo:
    | { rail: 'sandbox'; expiresAfterDays: number }
    | {
        rail: 'stripe';
        expiresAfterDays: number;
        secretKey: string;
        webhookSecret: string;
        baseUrl: string;
        timeoutMs: number;
      };
  /** How often reconciliation asks STP and Stripe what their webhooks would have told. */
  reconcileIntervalMs: number;
}

export interface BoletoRailConfig {
  rail: 'sandbox' | 'efi' | 'inter';
  /** Calendar days from today (in Brasília) to a boleto's due date; a live issuer's moves to the next business day. */
  dueDays: number;
  /** How long a create waits for the issuer to register its boleto before it answers without the linha digitável. */
  issueWaitMs: number;
  /** How often the reconciliation worker asks the issuer for paid charges and follows registrations. */
  reconcileIntervalMs: number;
  /** Efí's API Cobranças: Basic → Bearer, no client certificate. */
  efi?: EfiConfig;
  /** Banco Inter's API Cobrança v3: OAuth2 client credentials over mutual TLS. */
  inter?: InterConfig;
}

/**
 * A hot wallet's private key, as read from the environment or its file: it is never printed
 * (String(), JSON and util.inspect all show `[hot wallet key]`), so a logged config cannot leak it.
 */
export class HotWalletKey {
  readonly #bytes: Uint8Array;

  constructor(bytes: Uint8Array) {
    this.#bytes = bytes;
  }

  /** The 32 key bytes, for the one module that signs. */
  reveal(): Uint8Array {
    return this.#bytes;
  }

  toString(): string {
    return '[hot wallet key]';
  }

  toJSON(): string {
    return '[hot wallet key]';
  }

  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return '[hot wallet key]';
  }
}

/** One EVM chain under CHAIN_RAIL=live. */
export interface EvmChainConfig {
  rpcUrl: string;
  usdtContract: string;
  confirmations: number;
  chainId: bigint;
  /** The most a send offers per gas (maxFeePerGas), in wei; a stuck send is never replaced above it. */
  maxFeePerGas: bigint;
}

export type ChainRailConfig =
  | { rail: 'sandbox' }
  | {
      rail: 'live';
      /** How often the deposit watchers and the token sender poll their nodes. */
      pollIntervalMs: number;
      /** Each call to a node is given this long. */
      timeoutMs: number;
      /** A send with no receipt this long after its broadcast is replaced (EVM) or rebuilt once expired (TRON). */
      stuckAfterMs: number;
      tron: {
        apiUrl: string;
        apiKey: string | undefined;
        usdtContract: string;
        confirmations: number;
        /** fee_limit of each TRC-20 send, in sun. */
        feeLimitSun: bigint;
      };
      /** Only the EVM chains with an endpoint (required for both when EXCHANGE_EVM_XPUB is set). */
      eth: EvmChainConfig | undefined;
      bsc: EvmChainConfig | undefined;
      hotWallets: { tron: HotWalletKey | undefined; evm: HotWalletKey | undefined };
      /** Send ceilings per chain, in micro-USDT (6 decimals, whatever the chain's token decimals). */
      maxPerOrder: bigint;
      maxPerDay: bigint;
    };

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

type Env = Readonly<Record<string, string | undefined>>;

/** Reads each variable with its own rule and collects every problem before failing. */
class EnvReader {
  readonly problems: string[] = [];

  constructor(private readonly env: Env) {}

  private raw(name: string): string | undefined {
    const value = this.env[name];
    return value === undefined || value.trim() === '' ? undefined : value.trim();
  }

  string(name: string, fallback: string): string {
    return this.raw(name) ?? fallback;
  }

  optionalString(name: string): string | undefined {
    return this.raw(name);
  }

  integer(name: string, fallback: number, min: number, max = Number.MAX_SAFE_INTEGER): number {
    const value = this.raw(name);
    if (value === undefined) return fallback;
    if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max) {
      this.problems.push(`${name}=${JSON.stringify(value)}: must be a whole number from ${min} to ${max}`);
      return fallback;
    }
    return Number(value);
  }

  /**
   * `BRL:10000,KES:500000`: a currency (or USDT) and an amount in major units, per entry (APPROVAL_THRESHOLD,
   * BACKOFFICE_LOW_WATER).
   */
  approvalThreshold(name: string): Record<string, bigint> {
    const value = this.raw(name);
    const thresholds: Record<string, bigint> = {};
    if (value === undefined) return thresholds;
    for (const entry of value.split(',')) {
      const [code = '', amount = ''] = entry.trim().split(':');
      const decimals = code === 'USDT' ? 6 : isCurrency(code) ? CURRENCIES[code] : undefined;
      const minor = decimals === undefined ? undefined : parseDecimal(amount.trim(), decimals);
      if (decimals === undefined || minor === undefined || minor <= 0n || code in thresholds) {
        this.problems.push(
          `${name}=${JSON.stringify(value)}: must be CURRENCY:AMOUNT entries separated by commas, ` +
            `each currency once (${[...CURRENCY_CODES, 'USDT'].join(', ')}), each amount a positive number in major units`,
        );
        return {};
      }
      thresholds[code] = minor;
    }
    return thresholds;
  }

  boolean(name: string, fallback: boolean): boolean {
    const value = this.raw(name)?.toLowerCase();
    if (value === undefined) return fallback;
    if (['1', 'true', 'yes', 'on'].includes(value)) return true;
    if (['0', 'false', 'no', 'off'].includes(value)) return false;
    this.problems.push(`${name}=${JSON.stringify(value)}: must be true or false (also 1/0, yes/no, on/off)`);
    return fallback;
  }

  oneOf<T extends string>(name: string, fallback: T, allowed: readonly T[]): T {
    const value = this.raw(name);
    if (value === undefined) return fallback;
    if ((allowed as readonly string[]).includes(value)) return value as T;
    this.problems.push(`${name}=${JSON.stringify(value)}: must be one of ${allowed.join(', ')}`);
    return fallback;
  }

  url(name: string, fallback: string | undefined, protocols: readonly string[]): string | undefined {
    const value = this.raw(name);
    if (value === undefined) return fallback;
    try {
      const url = new URL(value);
      if (protocols.includes(url.protocol)) return value;
    } catch {
      // reported below
    }
    this.problems.push(`${name}: must be a URL starting with ${protocols.map((p) => `${p}//`).join(' or ')}`);
    return fallback;
  }

  masterKey(name: string): Buffer | undefined {
    const value = this.raw(name);
    if (value === undefined) return undefined;
    const key = /^[0-9a-fA-F]{64}$/.test(value) ? Buffer.from(value, 'hex') : Buffer.from(value, 'base64');
    if (key.length === 32 && (/^[0-9a-fA-F]{64}$/.test(value) || /^[A-Za-z0-9+/]{43}=?$/.test(value))) {
      return key;
    }
    this.problems.push(`${name}: must be 32 bytes, written as 64 hex digits or Base64`);
    return undefined;
  }

  matching(name: string, fallback: string, pattern: RegExp, rule: string): string {
    const value = this.raw(name);
    if (value === undefined) return fallback;
    if (pattern.test(value)) return value;
    this.problems.push(`${name}=${JSON.stringify(value)}: must be ${rule}`);
    return fallback;
  }

  rsaPrivateKey(name: string): string | undefined {
    const value = this.raw(name);
    if (value === undefined) return undefined;
    try {
      if (createPrivateKey(value).asymmetricKeyType === 'rsa') return value;
    } catch {
      // reported below
    }
    this.problems.push(
      `${name}: must be an RSA private key in PEM (PKCS#8), which signs dynamic Pix charges with RS256`,
    );
    return undefined;
  }

  /** An account-level extended public key; unset falls back to the published sandbox key only while the sandbox is on. */
  accountXpub(
    name: string,
    family: AddressFamily,
    sandbox: boolean,
    required: boolean,
  ): { xpub: string | undefined; sandbox: boolean } {
    const value = this.raw(name);
    if (value === undefined) {
      if (sandbox) return { xpub: SANDBOX_XPUBS[family], sandbox: true };
      if (required)
        this.problems.push(
          `${name}: required when CASHGATE_SANDBOX=false: the account-level xpub (${ACCOUNT_PATHS[family]}) deposit addresses derive from`,
        );
      return { xpub: undefined, sandbox: false };
    }
    const parsed = parseAccountXpub(value);
    if ('problem' in parsed) this.problems.push(`${name}: ${parsed.problem}`);
    return { xpub: 'problem' in parsed ? SANDBOX_XPUBS[family] : value, sandbox: false };
  }

  pixKey(name: string, fallback: string): string {
    const value = this.raw(name);
    if (value === undefined) return fallback;
    if (PIX_KEY_TYPES.some((type) => pixKeyProblem(type, value) === undefined)) return value;
    this.problems.push(
      `${name}=${JSON.stringify(value)}: must be a Pix key: a CPF, a CNPJ, +55 and a phone number, an e-mail or a random key (UUID)`,
    );
    return fallback;
  }

  trustProxy(name: string): TrustProxy {
    const value = this.raw(name);
    if (value === undefined) return false;
    const lower = value.toLowerCase();
    if (lower === 'false' || lower === '0') return false;
    if (lower === 'true') return true;
    if (/^\d+$/.test(value)) return Number(value);
    const entries = value.split(',').map((entry) => entry.trim());
    const bad = entries.filter((entry) => whitelistEntryProblem(entry) !== undefined);
    if (bad.length === 0) return entries;
    this.problems.push(
      `${name}=${JSON.stringify(value)}: must be false, true, a hop count, or a comma-separated list of proxy addresses/CIDRs`,
    );
    return false;
  }
}

/** The variables KENYA_RAIL=daraja needs, each named when missing. */
const DARAJA_REQUIRED = [
  'DARAJA_CONSUMER_KEY',
  'DARAJA_CONSUMER_SECRET',
  'DARAJA_STK_SHORTCODE',
  'DARAJA_STK_PASSKEY',
  'DARAJA_B2C_SHORTCODE',
  'DARAJA_INITIATOR_NAME',
  'DARAJA_INITIATOR_PASSWORD',
  'DARAJA_CERTIFICATE',
] as const;

function darajaCertificate(read: EnvReader, cwd: string): string {
  const path = read.optionalString('DARAJA_CERTIFICATE') ?? '';
  try {
    const pem = readFileSync(resolve(cwd, path), 'utf8');
    certificateKey(pem);
    return pem;
  } catch (error) {
    read.problems.push(
      `DARAJA_CERTIFICATE=${JSON.stringify(path)}: must be the path of a readable PEM certificate with an RSA public key ` +
        `(${error instanceof Error ? error.message : String(error)})`,
    );
    return '';
  }
}

/** The variables BRAZIL_RAIL=apipix needs, each named when missing. */
const API_PIX_REQUIRED = [
  'PIX_PSP_BASE_URL',
  'PIX_PSP_CLIENT_ID',
  'PIX_PSP_CLIENT_SECRET',
  'PIX_PSP_CERT',
  'PIX_PSP_KEY',
  'PIX_KEY',
] as const;

/** A PEM file's text, or a problem naming the variable. */
function pemFile(read: EnvReader, cwd: string, name: string, what: RegExp, described: string): string {
  const path = read.optionalString(name) ?? '';
  try {
    const pem = readFileSync(resolve(cwd, path), 'utf8');
    if (!what.test(pem)) throw new Error('the file holds no PEM block of that kind');
    return pem;
  } catch (error) {
    read.problems.push(
      `${name}=${JSON.stringify(path)}: must be the path of a readable PEM file holding ${described} ` +
        `(${error instanceof Error ? error.message : String(error)})`,
    );
    return '';
  }
}

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----/;
const PEM_PRIVATE_KEY = /-----BEGIN (RSA |EC )?PRIVATE KEY-----/;

function brazilConfig(read: EnvReader, cwd: string): BrazilRailConfig {
  const rail = read.oneOf('BRAZIL_RAIL', 'sandbox', ['sandbox', 'apipix'] as const);
  if (rail === 'sandbox') return { rail };
  const missing = API_PIX_REQUIRED.filter((name) => read.optionalString(name) === undefined);
  for (const name of missing) read.problems.push(`${name}: required when BRAZIL_RAIL=apipix`);
  const baseUrl = (read.url('PIX_PSP_BASE_URL', '', ['https:', 'http:']) ?? '').replace(/\/+$/, '');
  const origin = baseUrl === '' ? '' : new URL(baseUrl).origin;
  const file = (name: string, what: RegExp, described: string) =>
    missing.includes(name as (typeof API_PIX_REQUIRED)[number]) ? '' : pemFile(read, cwd, name, what, described);
  const caPath = read.optionalString('PIX_PSP_CA');
  return {
    rail,
    apiPix: {
      baseUrl,
      sendBaseUrl: (read.url('PIX_PSP_SEND_BASE_URL', origin, ['https:', 'http:']) ?? '').replace(/\/+$/, ''),
      tokenUrl: read.url('PIX_PSP_TOKEN_URL', `${baseUrl}/oauth/token`, ['https:', 'http:']) ?? '',
      clientId: read.string('PIX_PSP_CLIENT_ID', ''),
      clientSecret: read.string('PIX_PSP_CLIENT_SECRET', ''),
      certPem: file('PIX_PSP_CERT', PEM_CERTIFICATE, 'a certificate'),
      keyPem: file('PIX_PSP_KEY', PEM_PRIVATE_KEY, 'a private key'),
      caPem: caPath === undefined ? undefined : pemFile(read, cwd, 'PIX_PSP_CA', PEM_CERTIFICATE, 'a certificate'),
      timeoutMs: read.integer('PIX_PSP_TIMEOUT_MS', 15_000, 100, 120_000),
    },
    reconcileIntervalMs: read.integer('PIX_RECONCILE_INTERVAL_MS', 30_000, 10, 3_600_000),
    resultTimeoutMs: read.integer('PIX_PAYOUT_RESULT_TIMEOUT_MS', 300_000, 100, 86_400_000),
  };
}

/** The variables each live Mexican rail needs, each named when missing. */
const MEXICO_REQUIRED = {
  stp: ['STP_EMPRESA', 'STP_PRIVATE_KEY', 'STP_CLABE_PREFIX'],
  stripe: ['STRIPE_SECRET_KEY', 'STRIPE_WEBHOOK_SECRET'],
} as const;

const PEM_ANY_PRIVATE_KEY = /-----BEGIN (ENCRYPTED |RSA )?PRIVATE KEY-----/;

function mexicoConfig(read: EnvReader, cwd: string): MexicoRailConfig {
  const speiRail = read.oneOf('MEXICO_SPEI_RAIL', 'sandbox', ['sandbox', 'stp'] as const);
  const oxxoRail = read.oneOf('MEXICO_OXXO_RAIL', 'sandbox', ['sandbox', 'stripe'] as const);
  const required = (rail: 'stp' | 'stripe', variable: string) => {
    const missing: readonly string[] = MEXICO_REQUIRED[rail].filter((name) => read.optionalString(name) === undefined);
    for (const name of missing) read.problems.push(`${name}: required when ${variable}=${rail}`);
    return missing;
  };
  const prefixRule = 'the 10-digit CLABE prefix: 646 (STP) + 180 + the 4-digit company prefix';
  const baseUrl = (name: string, fallback: string) =>
    (read.url(name, fallback, ['https:', 'http:']) ?? '').replace(/\/+$/, '');
  let spei: MexicoRailConfig['spei'];
  if (speiRail === 'sandbox') {
    spei = {
      rail: 'sandbox',
      clabePrefix: read.matching('STP_CLABE_PREFIX', SANDBOX_CLABE_PREFIX, /^646180\d{4}$/, prefixRule),
    };
  } else {
    const missing = required('stp', 'MEXICO_SPEI_RAIL');
    spei = {
      rail: 'stp',
      clabePrefix: read.matching('STP_CLABE_PREFIX', '', /^646180\d{4}$/, prefixRule),
      baseUrl: baseUrl('STP_BASE_URL', 'https://prod.stpmex.com/speiws/rest'),
      queryUrl: baseUrl('STP_QUERY_URL', 'https://prod.stpmex.com'),
      empresa: read.string('STP_EMPRESA', ''),
      privateKeyPem: missing.includes('STP_PRIVATE_KEY')
        ? ''
        : pemFile(read, cwd, 'STP_PRIVATE_KEY', PEM_ANY_PRIVATE_KEY, 'a private key (encrypted PKCS#8)'),
      passphrase: read.optionalString('STP_PRIVATE_KEY_PASSPHRASE'),
      timeoutMs: read.integer('STP_TIMEOUT_MS', 15_000, 100, 120_000),
    };
    if (spei.privateKeyPem !== '') {
      try {
        createPrivateKey({ key: spei.privateKeyPem, passphrase: spei.passphrase ?? '' });
      } catch (error) {
        read.problems.push(
          `STP_PRIVATE_KEY_PASSPHRASE: does not open STP_PRIVATE_KEY (${error instanceof Error ? error.message : String(error)})`,
        );
      }
    }
  }
  const expiresAfterDays = read.integer('OXXO_EXPIRES_AFTER_DAYS', 3, 1, 7);
  let oxxo: MexicoRailConfig['oxxo'];
  if (oxxoRail === 'sandbox') {
    oxxo = { rail: 'sandbox', expiresAfterDays };
  } else {
    required('stripe', 'MEXICO_OXXO_RAIL');
    oxxo = {
      rail: 'stripe',
      expiresAfterDays,
      secretKey: read.string('STRIPE_SECRET_KEY', ''),
      webhookSecret: read.string('STRIPE_WEBHOOK_SECRET', ''),
      baseUrl: baseUrl('STRIPE_BASE_URL', 'https://api.stripe.com'),
      timeoutMs: read.integer('STRIPE_TIMEOUT_MS', 15_000, 100, 120_000),
    };
  }
  return { spei, oxxo, reconcileIntervalMs: read.integer('MEXICO_RECONCILE_INTERVAL_MS', 60_000, 10, 3_600_000) };
}

/** The variables each live boleto issuer needs, each named when missing. */
const BOLETO_REQUIRED = {
  efi: ['EFI_CLIENT_ID', 'EFI_CLIENT_SECRET'],
  inter: ['INTER_CLIENT_ID', 'INTER_CLIENT_SECRET', 'INTER_CERT', 'INTER_KEY'],
} as const;

function boletoConfig(read: EnvReader, cwd: string): BoletoRailConfig {
  const rail = read.oneOf('BRAZIL_BOLETO_RAIL', 'sandbox', ['sandbox', 'efi', 'inter'] as const);
  const common = {
    rail,
    dueDays: read.integer('BOLETO_DUE_DAYS', 3, 1, 60),
    issueWaitMs: read.integer('BOLETO_ISSUE_WAIT_MS', 5_000, 0, 60_000),
    reconcileIntervalMs: read.integer('BOLETO_RECONCILE_INTERVAL_MS', 60_000, 10, 3_600_000),
  };
  if (rail === 'sandbox') return common;
  const missing: readonly string[] = BOLETO_REQUIRED[rail].filter((name) => read.optionalString(name) === undefined);
  for (const name of missing) read.problems.push(`${name}: required when BRAZIL_BOLETO_RAIL=${rail}`);
  const baseUrl = (name: string, fallback: string) =>
    (read.url(name, fallback, ['https:', 'http:']) ?? '').replace(/\/+$/, '');
  const timeoutMs = read.integer('BOLETO_ISSUER_TIMEOUT_MS', 15_000, 100, 120_000);
  if (rail === 'efi') {
    return {
      ...common,
      efi: {
        baseUrl: baseUrl('EFI_BASE_URL', 'https://cobrancas.api.efipay.com.br'),
        clientId: read.string('EFI_CLIENT_ID', ''),
        clientSecret: read.string('EFI_CLIENT_SECRET', ''),
        timeoutMs,
      },
    };
  }
  const file = (name: string, what: RegExp, described: string) =>
    missing.includes(name) ? '' : pemFile(read, cwd, name, what, described);
  return {
    ...common,
    inter: {
      baseUrl: baseUrl('INTER_BASE_URL', 'https://cdpj.partners.bancointer.com.br'),
      clientId: read.string('INTER_CLIENT_ID', ''),
      clientSecret: read.string('INTER_CLIENT_SECRET', ''),
      certPem: file('INTER_CERT', PEM_CERTIFICATE, 'a certificate'),
      keyPem: file('INTER_KEY', PEM_PRIVATE_KEY, 'a private key'),
      caPem:
        read.optionalString('INTER_CA') === undefined
          ? undefined
          : pemFile(read, cwd, 'INTER_CA', PEM_CERTIFICATE, 'a certificate'),
      account:
        read.optionalString('INTER_ACCOUNT') === undefined
          ? undefined
          : read.matching(
              'INTER_ACCOUNT',
              '',
              /^[1-9][0-9]*$/,
              'the account number with its check digit, no leading zeros',
            ),
      timeoutMs,
    },
  };
}

function kenyaConfig(read: EnvReader, cwd: string): KenyaRailConfig {
  const rail = read.oneOf('KENYA_RAIL', 'sandbox', ['sandbox', 'daraja'] as const);
  if (rail === 'sandbox') return { rail };
  const missing = DARAJA_REQUIRED.filter((name) => read.optionalString(name) === undefined);
  for (const name of missing) read.problems.push(`${name}: required when KENYA_RAIL=daraja`);
  const shortcode = (name: string) => read.matching(name, '', /^\d{5,7}$/, 'a shortcode of 5 to 7 digits');
  const stkShortcode = shortcode('DARAJA_STK_SHORTCODE');
  return {
    rail,
    daraja: {
      baseUrl: (read.url('DARAJA_BASE_URL', 'https://api.safaricom.co.ke', ['https:', 'http:']) ?? '').replace(
        /\/+$/,
        '',
      ),
      consumerKey: read.string('DARAJA_CONSUMER_KEY', ''),
      consumerSecret: read.string('DARAJA_CONSUMER_SECRET', ''),
      stk: {
        shortcode: stkShortcode,
        passkey: read.string('DARAJA_STK_PASSKEY', ''),
        transactionType: read.oneOf('DARAJA_STK_TRANSACTION_TYPE', 'CustomerPayBillOnline', [
          'CustomerPayBillOnline',
          'CustomerBuyGoodsOnline',
        ] as const),
        partyB: read.matching(
          'DARAJA_STK_PARTY_B',
          stkShortcode,
          /^\d{5,9}$/,
          'a shortcode or till number of 5 to 9 digits',
        ),
      },
      b2c: {
        shortcode: shortcode('DARAJA_B2C_SHORTCODE'),
        initiatorName: read.string('DARAJA_INITIATOR_NAME', ''),
        initiatorPassword: read.string('DARAJA_INITIATOR_PASSWORD', ''),
        certificatePem: missing.includes('DARAJA_CERTIFICATE') ? '' : darajaCertificate(read, cwd),
        commandId: read.oneOf('DARAJA_B2C_COMMAND_ID', 'BusinessPayment', [
          'BusinessPayment',
          'SalaryPayment',
          'PromotionPayment',
        ] as const),
      },
      timeoutMs: read.integer('DARAJA_TIMEOUT_MS', 30_000, 100, 120_000),
    },
    stkQueryAfterMs: read.integer('DARAJA_STK_QUERY_AFTER_MS', 90_000, 100, 3_600_000),
    resultTimeoutMs: read.integer('DARAJA_RESULT_TIMEOUT_MS', 600_000, 100, 86_400_000),
    reconcileIntervalMs: read.integer('DARAJA_RECONCILE_INTERVAL_MS', 10_000, 10, 3_600_000),
  };
}

/** Mainnet USDT contracts (rails.md §7). */
const USDT_CONTRACTS = {
  TRON: 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t',
  ETH: '0xdAC17F958D2ee523a2206206994597C13D831ec7',
  BSC: '0x55d398326f99059fF775485246999027B3197955',
} as const;

/** A hot wallet key from NAME (hex) or NAME_FILE (a file holding the hex); both set is a problem. */
function hotWalletKey(read: EnvReader, cwd: string, name: string): HotWalletKey | undefined {
  const inline = read.optionalString(name);
  const path = read.optionalString(`${name}_FILE`);
  if (inline !== undefined && path !== undefined) {
    read.problems.push(`${name} and ${name}_FILE: set one of them, not both`);
    return undefined;
  }
  let text = inline;
  if (path !== undefined) {
    try {
      text = readFileSync(resolve(cwd, path), 'utf8').trim();
    } catch (error) {
      read.problems.push(
        `${name}_FILE=${JSON.stringify(path)}: must be the path of a readable file holding the key ` +
          `(${error instanceof Error ? ((error as NodeJS.ErrnoException).code ?? error.message) : String(error)})`,
      );
      return undefined;
    }
  }
  if (text === undefined) return undefined;
  const digits = text.replace(/^0x/i, '');
  // Never echo the value: it is a private key.
  if (!/^[0-9a-fA-F]{64}$/.test(digits) || /^0+$/.test(digits)) {
    read.problems.push(
      `${path === undefined ? name : `${name}_FILE`}: must be a private key of 64 hex digits (0x allowed)`,
    );
    return undefined;
  }
  return new HotWalletKey(Uint8Array.from(Buffer.from(digits, 'hex')));
}

/** Decimal USDT text (at most 6 places) as micro-USDT. */
function usdtAmount(read: EnvReader, name: string, fallback: bigint): bigint {
  const value = read.optionalString(name);
  if (value === undefined) return fallback;
  const match = /^(\d{1,15})(?:\.(\d{1,6}))?$/.exec(value);
  if (match === null || BigInt(`${match[1]}${(match[2] ?? '').padEnd(6, '0')}`) === 0n) {
    read.problems.push(`${name}=${JSON.stringify(value)}: must be a positive USDT amount with at most 6 decimals`);
    return fallback;
  }
  return BigInt(`${match[1]}${(match[2] ?? '').padEnd(6, '0')}`);
}

/** Whole or decimal gwei (at most 9 places) as wei. */
function gwei(read: EnvReader, name: string, fallback: bigint): bigint {
  const value = read.optionalString(name);
  if (value === undefined) return fallback;
  const match = /^(\d{1,9})(?:\.(\d{1,9}))?$/.exec(value);
  if (match === null || BigInt(`${match[1]}${(match[2] ?? '').padEnd(9, '0')}`) === 0n) {
    read.problems.push(`${name}=${JSON.stringify(value)}: must be a positive number of gwei with at most 9 decimals`);
    return fallback;
  }
  return BigInt(`${match[1]}${(match[2] ?? '').padEnd(9, '0')}`);
}

function evmChainConfig(
  read: EnvReader,
  chain: 'ETH' | 'BSC',
  required: boolean,
  defaults: { confirmations: number; chainId: number; maxFeeGwei: bigint },
): EvmChainConfig | undefined {
  const rpcUrl = read.url(`${chain}_RPC_URL`, undefined, ['https:', 'http:']);
  if (rpcUrl === undefined) {
    if (required)
      read.problems.push(
        `${chain}_RPC_URL: required when CHAIN_RAIL=live and EXCHANGE_EVM_XPUB is set (the ${chain} node's JSON-RPC URL)`,
      );
    return undefined;
  }
  const usdtContract = read.matching(
    `${chain}_USDT_CONTRACT`,
    USDT_CONTRACTS[chain],
    /^0x[0-9a-fA-F]{40}$/,
    'a contract address (0x and 40 hex digits)',
  );
  return {
    rpcUrl,
    usdtContract,
    confirmations: read.integer(`${chain}_CONFIRMATIONS`, defaults.confirmations, 1, 10_000),
    chainId: BigInt(read.integer(`${chain}_CHAIN_ID`, defaults.chainId, 1, 2 ** 32)),
    maxFeePerGas: gwei(read, `${chain}_MAX_FEE_GWEI`, defaults.maxFeeGwei * 1_000_000_000n),
  };
}

function chainConfig(read: EnvReader, cwd: string, evmXpub: boolean): ChainRailConfig {
  const rail = read.oneOf('CHAIN_RAIL', 'sandbox', ['sandbox', 'live'] as const);
  if (rail === 'sandbox') return { rail };
  const tronUrl = read.url('TRON_API_URL', undefined, ['https:', 'http:']);
  if (tronUrl === undefined)
    read.problems.push(
      'TRON_API_URL: required when CHAIN_RAIL=live (a TronGrid-compatible HTTP API, e.g. https://api.trongrid.io)',
    );
  const tronContract = read.optionalString('TRON_USDT_CONTRACT') ?? USDT_CONTRACTS.TRON;
  if (!isTronAddress(tronContract))
    read.problems.push(`TRON_USDT_CONTRACT=${JSON.stringify(tronContract)}: must be a TRON address (Base58Check, T…)`);
  return {
    rail,
    pollIntervalMs: read.integer('CHAIN_POLL_INTERVAL_MS', 5_000, 10, 600_000),
    timeoutMs: read.integer('CHAIN_TIMEOUT_MS', 15_000, 100, 120_000),
    stuckAfterMs: read.integer('CHAIN_SEND_STUCK_AFTER_MS', 300_000, 100, 86_400_000),
    tron: {
      apiUrl: (tronUrl ?? '').replace(/\/+$/, ''),
      apiKey: read.optionalString('TRON_API_KEY'),
      usdtContract: tronContract,
      confirmations: read.integer('TRON_CONFIRMATIONS', CONFIRMATIONS.TRON, 1, 10_000),
      feeLimitSun: BigInt(read.integer('TRON_FEE_LIMIT_SUN', 100_000_000, 1, 15_000_000_000)),
    },
    eth: evmChainConfig(read, 'ETH', evmXpub, { confirmations: CONFIRMATIONS.ETH, chainId: 1, maxFeeGwei: 200n }),
    bsc: evmChainConfig(read, 'BSC', evmXpub, { confirmations: CONFIRMATIONS.BSC, chainId: 56, maxFeeGwei: 20n }),
    hotWallets: {
      tron: hotWalletKey(read, cwd, 'TRON_HOT_WALLET_KEY'),
      evm: hotWalletKey(read, cwd, 'EVM_HOT_WALLET_KEY'),
    },
    maxPerOrder: usdtAmount(read, 'CHAIN_SEND_MAX_PER_ORDER_USDT', 10_000_000_000n),
    maxPerDay: usdtAmount(read, 'CHAIN_SEND_MAX_PER_DAY_USDT', 100_000_000_000n),
  };
}

function exchangeConfig(read: EnvReader, sandbox: boolean): Config['exchange'] {
  const tron = read.accountXpub('EXCHANGE_TRON_XPUB', 'tron', sandbox, true);
  const evm = read.accountXpub('EXCHANGE_EVM_XPUB', 'evm', sandbox, false);
  return {
    xpubs: { tron: tron.xpub ?? SANDBOX_XPUBS.tron, evm: evm.xpub },
    sandboxXpubs: [...(tron.sandbox ? (['tron'] as const) : []), ...(evm.sandbox ? (['evm'] as const) : [])],
    quoteTtlMs: read.integer('EXCHANGE_QUOTE_TTL_MS', 1_800_000, 60_000, 7 * 86_400_000),
    depositAddressPoolSize: read.integer('DEPOSIT_ADDRESS_POOL_SIZE', 1_000, 0, 100_000),
  };
}

/** Parses and validates the whole environment; throws one ConfigError naming every bad variable. */
export function loadConfig(env: Env = process.env, cwd = process.cwd()): Config {
  const read = new EnvReader(env);
  const host = read.string('HOST', '127.0.0.1');
  const port = read.integer('PORT', 8080, 0, 65535);
  const dataDirRaw = read.string('CASHGATE_DATA_DIR', './data');
  const sandbox = read.boolean('CASHGATE_SANDBOX', true);
  const config: Config = {
    host,
    port,
    dataDir: isAbsolute(dataDirRaw) ? dataDirRaw : resolve(cwd, dataDirRaw),
    databaseUrl: read.url('DATABASE_URL', undefined, ['postgres:', 'postgresql:']),
    adminToken: read.optionalString('CASHGATE_ADMIN_TOKEN'),
    adminRootTokenDisabled: read.boolean('ADMIN_ROOT_TOKEN_DISABLED', false),
    backofficeEnabled: read.boolean('BACKOFFICE_ENABLED', true),
    approvalThreshold: read.approvalThreshold('APPROVAL_THRESHOLD'),
    backofficeLowWater: read.approvalThreshold('BACKOFFICE_LOW_WATER'),
    masterKey: read.masterKey('CASHGATE_MASTER_KEY'),
    keyActivationDelayMs: read.integer('KEY_ACTIVATION_DELAY_MS', 90_000, 0),
    signatureWindowMs: read.integer('SIGNATURE_WINDOW_MS', 300_000, 1_000),
    callbackRetryIntervalMs: read.integer('CALLBACK_RETRY_INTERVAL_MS', 180_000, 1),
    callbackMaxRetries: read.integer('CALLBACK_MAX_RETRIES', 2, 0, 100),
    callbackRetryWindowMs: read.integer('CALLBACK_RETRY_WINDOW_MS', 1_800_000, 1),
    callbackAllowPrivateNetworks: read.boolean('CALLBACK_ALLOW_PRIVATE_NETWORKS', false),
    callbackTimeoutMs: read.integer('CALLBACK_TIMEOUT_MS', 10_000, 100, 60_000),
    callbackConcurrency: read.integer('CALLBACK_CONCURRENCY', 16, 1, 1_000),
    callbackConcurrencyPerHost: read.integer('CALLBACK_CONCURRENCY_PER_HOST', 4, 1, 1_000),
    callbackPollIntervalMs: read.integer('CALLBACK_POLL_INTERVAL_MS', 1_000, 10, 60_000),
    railLeaseMs: read.integer('RAIL_LEASE_MS', 60_000, 100, 3_600_000),
    railPollIntervalMs: read.integer('RAIL_POLL_INTERVAL_MS', 1_000, 10, 60_000),
    nodes: {
      heartbeatMs: read.integer('NODE_HEARTBEAT_MS', 2_000, 50, 60_000),
      deadAfterMs: read.integer('NODE_DEAD_AFTER_MS', 10_000, 200, 600_000),
      shutdownGraceMs: read.integer('SHUTDOWN_GRACE_MS', 10_000, 100, 600_000),
    },
    databasePoolSize: read.integer('DATABASE_POOL_SIZE', 16, 1, 1_000),
    workers: read.boolean('CASHGATE_WORKERS', true),
    sandbox,
    pix: {
      key: read.pixKey('PIX_KEY', SANDBOX_PIX_KEY),
      merchantName: read.matching(
        'PIX_MERCHANT_NAME',
        'CASHGATE SANDBOX',
        /^[\x20-\x7e]{1,25}$/,
        '1 to 25 ASCII characters',
      ),
      merchantCity: read.matching('PIX_MERCHANT_CITY', 'SAO PAULO', /^[\x20-\x7e]{1,15}$/, '1 to 15 ASCII characters'),
      jwsPrivateKeyPem: read.rsaPrivateKey('PIX_JWS_PRIVATE_KEY'),
    },
    boletoBankCode: read.matching('BOLETO_BANK_CODE', '341', /^\d{3}$/, 'a three-digit COMPE bank code'),
    exchange: exchangeConfig(read, sandbox),
    kenya: kenyaConfig(read, cwd),
    brazil: brazilConfig(read, cwd),
    boleto: boletoConfig(read, cwd),
    mexico: mexicoConfig(read, cwd),
    chain: chainConfig(read, cwd, env.EXCHANGE_EVM_XPUB !== undefined && env.EXCHANGE_EVM_XPUB.trim() !== ''),
    trustProxy: read.trustProxy('TRUST_PROXY'),
    publicBaseUrl: '',
    hstsMaxAgeSeconds: read.integer('HSTS_MAX_AGE_SECONDS', 31_536_000, 0),
    rateLimitPerKeyPerMinute: read.integer('RATE_LIMIT_PER_KEY_PER_MINUTE', 6_000, 1),
    logLevel: read.oneOf<LogLevel>('LOG_LEVEL', 'info', ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']),
    demo: read.boolean('CASHGATE_DEMO', false),
  };
  const displayHost = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
  const publicBaseUrl = read.url('PUBLIC_BASE_URL', `http://${displayHost}:${port}`, ['http:', 'https:']);
  config.publicBaseUrl = (publicBaseUrl ?? '').replace(/\/+$/, '');
  if (config.nodes.deadAfterMs < 2 * config.nodes.heartbeatMs) {
    read.problems.push('NODE_DEAD_AFTER_MS: must be at least twice NODE_HEARTBEAT_MS');
  }
  if (config.adminToken !== undefined && config.adminToken.length < 16) {
    read.problems.push('CASHGATE_ADMIN_TOKEN: must be at least 16 characters');
  }
  if (read.problems.length > 0) throw new ConfigError(read.problems);
  return config;
}
