/** Times are Unix milliseconds; flags are 0/1 integers so one schema serves SQLite and PostgreSQL. */
export interface MerchantTable {
  id: string;
  name: string;
  language: string;
  callback_url: string | null;
  created_at: number;
  updated_at: number;
}

export type ApiKeyStatus = 'active' | 'disabled' | 'deleted';

export interface ApiKeyTable {
  access_key: string;
  merchant_id: string;
  label: string;
  /** AES-256-GCM sealed secret: base64(iv | tag | ciphertext). */
  secret_sealed: string;
  /** JSON array of permission names. */
  permissions: string;
  /** JSON array of addresses and CIDR ranges. */
  ip_whitelist: string;
  debug: number;
  status: ApiKeyStatus;
  active_at: number;
  created_at: number;
  updated_at: number;
}

export interface RequestNonceTable {
  access_key: string;
  nonce: string;
  expires_at: number;
}

export interface Database {
  merchants: MerchantTable;
  api_keys: ApiKeyTable;
  request_nonces: RequestNonceTable;
}
