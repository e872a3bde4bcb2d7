import type { Language } from './language.js';

/** Response codes of the merchant API (DESIGN §1.5). */
export type ApiCode = '200' | '300' | '301' | '307' | '429' | '500';

export const HTTP_STATUS_OF_CODE: Record<ApiCode, number> = {
  '200': 200,
  '300': 400,
  '301': 403,
  '307': 401,
  '429': 429,
  '500': 500,
};

export type JsonType = 'string' | 'integer' | 'number' | 'boolean' | 'object' | 'array' | 'null';

/** Named formats a field can be required to follow; each has a localized description. */
export type FieldFormat =
  | 'url'
  | 'currencyCode'
  | 'ipOrCidr'
  | 'kenyanMobile'
  | 'cpf'
  | 'cnpj'
  | 'pixPhone'
  | 'pixEmail'
  | 'pixEvp'
  | 'bankAccount'
  | 'bankAgency'
  | 'bankName'
  | 'pairedWith'
  | 'tronAddress'
  | 'evmAddress'
  | 'tronTxId'
  | 'evmTxHash'
  | 'identifier';

/** The rule a field broke, structured so it can be said in every language. */
export type FieldRule =
  | { rule: 'required' }
  | { rule: 'type'; expected: readonly JsonType[] }
  | { rule: 'minItems'; min: number }
  | { rule: 'maxItems'; max: number }
  | { rule: 'invalid' }
  | { rule: 'maxLength'; max: number }
  | { rule: 'minLength'; min: number }
  | { rule: 'oneOf'; allowed: readonly string[] }
  | { rule: 'format'; format: FieldFormat }
  | { rule: 'minimum'; min: number }
  | { rule: 'maximum'; max: number }
  /** A money amount: plain decimal text or number, no exponent, at most `decimals` places, at least `minimum`. */
  | { rule: 'amount'; decimals: number; minimum: string; maximum: string; signed: boolean };

/**
 * What is wrong with a request refused before any route sees it: its path, its Host, or its HTTP
 * framing (the last ones found by Node's parser, answered from the connection).
 */
export type RequestProblem =
  | 'bad_url'
  | 'param_too_long'
  | 'host_missing'
  | 'expectation'
  | 'header_overflow'
  | 'invalid_method'
  | 'bad_framing'
  | 'timeout'
  | 'aborted'
  | 'control_in_path'
  | 'nul_character';

const REQUEST_PROBLEMS: Record<RequestProblem, Record<Language, string>> = {
  bad_url: {
    en: 'the path is not valid: a %-escape is malformed or does not decode to UTF-8 text',
    'pt-BR': 'o caminho não é válido: um escape % está malformado ou não decodifica em texto UTF-8',
    es: 'la ruta no es válida: un escape % está mal formado o no decodifica a texto UTF-8',
  },
  param_too_long: {
    en: 'a path segment is longer than 100 characters',
    'pt-BR': 'um segmento do caminho tem mais de 100 caracteres',
    es: 'un segmento de la ruta tiene más de 100 caracteres',
  },
  host_missing: {
    en: 'the Host header is missing (HTTP/1.1 requires it)',
    'pt-BR': 'falta o cabeçalho Host (o HTTP/1.1 o exige)',
    es: 'falta la cabecera Host (HTTP/1.1 la exige)',
  },
  expectation: {
    en: 'the Expect header is not supported: only Expect: 100-continue is',
    'pt-BR': 'o cabeçalho Expect não é suportado: só Expect: 100-continue',
    es: 'la cabecera Expect no se admite: solo Expect: 100-continue',
  },
  header_overflow: {
    en: 'the request line and headers are larger than 16 KB',
    'pt-BR': 'a linha de requisição e os cabeçalhos passam de 16 KB',
    es: 'la línea de petición y las cabeceras superan 16 KB',
  },
  invalid_method: {
    en: 'the HTTP method is not one this server knows',
    'pt-BR': 'o método HTTP não é conhecido por este servidor',
    es: 'el método HTTP no es uno que este servidor conozca',
  },
  bad_framing: {
    en: 'the request is not well-formed HTTP/1.1 (request line, headers, Content-Length or chunked encoding)',
    'pt-BR':
      'a requisição não é HTTP/1.1 bem formado (linha de requisição, cabeçalhos, Content-Length ou codificação chunked)',
    es: 'la petición no es HTTP/1.1 bien formado (línea de petición, cabeceras, Content-Length o codificación chunked)',
  },
  timeout: {
    en: 'the request was not received in time',
    'pt-BR': 'a requisição não foi recebida a tempo',
    es: 'la petición no se recibió a tiempo',
  },
  control_in_path: {
    en: 'the path holds a control character (%00–%1F or %7F–%9F once decoded)',
    'pt-BR': 'o caminho contém um caractere de controle (%00–%1F ou %7F–%9F depois de decodificado)',
    es: 'la ruta contiene un carácter de control (%00–%1F o %7F–%9F una vez decodificado)',
  },
  nul_character: {
    en: 'a query parameter or form field holds a NUL character (%00), which no text can keep',
    'pt-BR':
      'um parâmetro de consulta ou campo de formulário contém um caractere NUL (%00), que nenhum texto pode guardar',
    es: 'un parámetro de consulta o campo de formulario contiene un carácter NUL (%00), que ningún texto puede guardar',
  },
  aborted: {
    en: 'the request body ended before it was complete',
    'pt-BR': 'o corpo da requisição terminou antes de estar completo',
    es: 'el cuerpo de la petición terminó antes de estar completo',
  },
};

/** Every expected failure of the merchant API, as a typed value. */
export type ApiFailure =
  | { kind: 'header_missing'; header: string }
  | { kind: 'header_malformed'; header: string; expected: 'timestamp' | 'nonce' | 'sign' | 'access_key' }
  | { kind: 'unknown_access_key' }
  | { kind: 'signature_mismatch' }
  | { kind: 'timestamp_outside_window'; windowSeconds: number; serverTime: number }
  | { kind: 'nonce_reused' }
  | { kind: 'key_not_active'; activeAt: number }
  | { kind: 'key_disabled' }
  | { kind: 'key_deleted' }
  | { kind: 'ip_not_whitelisted'; ip: string }
  | { kind: 'permission_denied'; permission: string }
  | { kind: 'rate_limited'; limitPerMinute: number; retryAfterSeconds: number }
  | { kind: 'route_not_found'; method: string; path: string }
  | { kind: 'unsupported_media_type'; contentType: string }
  | { kind: 'body_not_json'; detail: string }
  | { kind: 'body_too_large'; limitBytes: number }
  | { kind: 'body_not_object' }
  | { kind: 'body_too_deep'; member: string; limit: number }
  | { kind: 'text_not_unicode'; member: string }
  | { kind: 'text_has_nul'; member: string }
  | { kind: 'charset_not_utf8'; charset: string }
  | { kind: 'malformed_request'; problem: RequestProblem }
  | { kind: 'unknown_fields'; fields: readonly string[] }
  | { kind: 'invalid_field'; field: string; rule: FieldRule }
  | { kind: 'order_not_found' }
  | { kind: 'voucher_unavailable'; orderStatus: string }
  | { kind: 'duplicate_external_order_id'; externalOrderId: string }
  | {
      kind: 'insufficient_balance';
      purpose: 'transfer' | 'exchange';
      currency: string;
      needed: string;
      available: string;
    }
  | { kind: 'rate_unavailable'; currency: string; token: string }
  | { kind: 'channel_not_live'; field: string; channelType: string }
  | { kind: 'exchange_amount_too_small'; field: string; detail: string }
  | { kind: 'chain_send_unavailable'; chainType: string; missing: string }
  | { kind: 'exchange_amount_too_large'; field: string; detail: string }
  | { kind: 'internal_error'; requestId: string };

export type FailureKind = ApiFailure['kind'];
type FailureOf<K extends FailureKind> = Extract<ApiFailure, { kind: K }>;
type Texts<K extends FailureKind> = Record<Language, (f: FailureOf<K>) => string>;

const iso = (ms: number): string => new Date(ms).toISOString();
const list = (items: readonly string[]): string => items.join(', ');

const TYPE_NAMES: Record<JsonType, Record<Language, string>> = {
  string: { en: 'a string', 'pt-BR': 'um texto (string)', es: 'un texto (string)' },
  integer: { en: 'an integer', 'pt-BR': 'um número inteiro', es: 'un número entero' },
  number: { en: 'a number', 'pt-BR': 'um número', es: 'un número' },
  boolean: { en: 'true or false', 'pt-BR': 'true ou false', es: 'true o false' },
  object: { en: 'a JSON object', 'pt-BR': 'um objeto JSON', es: 'un objeto JSON' },
  array: { en: 'a JSON array', 'pt-BR': 'uma lista JSON', es: 'una lista JSON' },
  null: { en: 'null', 'pt-BR': 'null', es: 'null' },
};

const OR: Record<Language, string> = { en: ' or ', 'pt-BR': ' ou ', es: ' o ' };

const FORMAT_NAMES: Record<FieldFormat, Record<Language, string>> = {
  ipOrCidr: {
    en: 'an IPv4 or IPv6 address or CIDR range (0.0.0.0 = any)',
    'pt-BR': 'um endereço IPv4 ou IPv6 ou uma faixa CIDR (0.0.0.0 = qualquer)',
    es: 'una dirección IPv4 o IPv6 o un rango CIDR (0.0.0.0 = cualquiera)',
  },
  url: { en: 'an http or https URL', 'pt-BR': 'uma URL http ou https', es: 'una URL http o https' },
  cpf: {
    en: 'a valid CPF: 11 digits whose check digits are right',
    'pt-BR': 'um CPF válido: 11 dígitos com dígitos verificadores corretos',
    es: 'un CPF válido: 11 dígitos con dígitos verificadores correctos',
  },
  cnpj: {
    en: 'a valid CNPJ: 14 characters (digits, or letters and digits in the alphanumeric CNPJ) whose check digits are right',
    'pt-BR':
      'um CNPJ válido: 14 caracteres (dígitos, ou letras e dígitos no CNPJ alfanumérico) com dígitos verificadores corretos',
    es: 'un CNPJ válido: 14 caracteres (dígitos, o letras y dígitos en el CNPJ alfanumérico) con dígitos verificadores correctos',
  },
  pixPhone: {
    en: 'a mobile phone Pix key: +55, the two-digit area code and the 9-digit mobile number, e.g. +5511999998888',
    'pt-BR': 'uma chave Pix de celular: +55, o DDD de dois dígitos e o número de 9 dígitos, ex. +5511999998888',
    es: 'una clave Pix de móvil: +55, el código de área de dos dígitos y el número de 9 dígitos, p. ej. +5511999998888',
  },
  pixEmail: {
    en: 'an e-mail Pix key in lower case, of at most 77 characters',
    'pt-BR': 'uma chave Pix de e-mail em minúsculas, de no máximo 77 caracteres',
    es: 'una clave Pix de correo en minúsculas, de como máximo 77 caracteres',
  },
  pixEvp: {
    en: 'a random Pix key (EVP): a UUID such as 123e4567-e12b-12d1-a456-426655440000',
    'pt-BR': 'uma chave Pix aleatória (EVP): um UUID como 123e4567-e12b-12d1-a456-426655440000',
    es: 'una clave Pix aleatoria (EVP): un UUID como 123e4567-e12b-12d1-a456-426655440000',
  },
  bankAccount: {
    en: 'an account number of 1 to 12 digits, optionally followed by -digit or -X',
    'pt-BR': 'um número de conta de 1 a 12 dígitos, opcionalmente seguido de -dígito ou -X',
    es: 'un número de cuenta de 1 a 12 dígitos, opcionalmente seguido de -dígito o -X',
  },
  bankAgency: {
    en: 'a branch number of 1 to 4 digits',
    'pt-BR': 'um número de agência de 1 a 4 dígitos',
    es: 'un número de agencia de 1 a 4 dígitos',
  },
  bankName: {
    en: 'a bank name exactly as POST /api/v3/bra/query/bank lists it',
    'pt-BR': 'um nome de banco exatamente como POST /api/v3/bra/query/bank o lista',
    es: 'un nombre de banco exactamente como lo lista POST /api/v3/bra/query/bank',
  },
  pairedWith: {
    en: 'sent together with its pair (userInfoType and userInfoNo go together)',
    'pt-BR': 'enviado junto com seu par (userInfoType e userInfoNo vão juntos)',
    es: 'enviado junto con su par (userInfoType y userInfoNo van juntos)',
  },
  kenyanMobile: {
    en: 'a Kenyan mobile number of 12 digits, 2547XXXXXXXX or 2541XXXXXXXX (no + and no leading 0)',
    'pt-BR': 'um celular queniano de 12 dígitos, 2547XXXXXXXX ou 2541XXXXXXXX (sem + e sem 0 inicial)',
    es: 'un móvil keniano de 12 dígitos, 2547XXXXXXXX o 2541XXXXXXXX (sin + ni 0 inicial)',
  },
  tronAddress: {
    en: 'a TRON address: 34 Base58 characters starting with T, with a valid Base58Check checksum and version byte 0x41',
    'pt-BR':
      'um endereço TRON: 34 caracteres Base58 começando com T, com checksum Base58Check válido e byte de versão 0x41',
    es: 'una dirección TRON: 34 caracteres Base58 que empiezan por T, con checksum Base58Check válido y byte de versión 0x41',
  },
  evmAddress: {
    en: 'an address of 0x and 40 hexadecimal digits, exactly in EIP-55 checksum case when it mixes upper and lower case',
    'pt-BR':
      'um endereço de 0x e 40 dígitos hexadecimais, exatamente no formato de checksum EIP-55 quando mistura maiúsculas e minúsculas',
    es: 'una dirección de 0x y 40 dígitos hexadecimales, exactamente en el formato de checksum EIP-55 cuando mezcla mayúsculas y minúsculas',
  },
  tronTxId: {
    en: 'a TRON transaction id: 64 hexadecimal digits without 0x',
    'pt-BR': 'um id de transação TRON: 64 dígitos hexadecimais sem 0x',
    es: 'un id de transacción TRON: 64 dígitos hexadecimales sin 0x',
  },
  identifier: {
    en: 'an identifier of printable characters: no control or bidirectional-control characters, no leading or trailing space',
    'pt-BR':
      'um identificador de caracteres imprimíveis: sem caracteres de controle nem de controle bidirecional, sem espaço no início ou no fim',
    es: 'un identificador de caracteres imprimibles: sin caracteres de control ni de control bidireccional, sin espacio al inicio o al final',
  },
  evmTxHash: {
    en: 'a transaction hash: 0x and 64 hexadecimal digits',
    'pt-BR': 'um hash de transação: 0x e 64 dígitos hexadecimais',
    es: 'un hash de transacción: 0x y 64 dígitos hexadecimales',
  },
  currencyCode: {
    en: 'a three-letter currency code',
    'pt-BR': 'um código de moeda de três letras',
    es: 'un código de moneda de tres letras',
  },
};

export function isFieldFormat(value: string): value is FieldFormat {
  return Object.hasOwn(FORMAT_NAMES, value);
}

const HEADER_RULES: Record<FailureOf<'header_malformed'>['expected'], Record<Language, string>> = {
  timestamp: {
    en: 'must be a 13-digit Unix time in milliseconds',
    'pt-BR': 'deve ser um horário Unix de 13 dígitos em milissegundos',
    es: 'debe ser una hora Unix de 13 dígitos en milisegundos',
  },
  nonce: {
    en: 'must be a 36-character UUID (8-4-4-4-12 hexadecimal groups)',
    'pt-BR': 'deve ser um UUID de 36 caracteres (grupos hexadecimais 8-4-4-4-12)',
    es: 'debe ser un UUID de 36 caracteres (grupos hexadecimales 8-4-4-4-12)',
  },
  sign: {
    en: 'must be the Base64 HMAC-SHA1 signature (28 characters)',
    'pt-BR': 'deve ser a assinatura HMAC-SHA1 em Base64 (28 caracteres)',
    es: 'debe ser la firma HMAC-SHA1 en Base64 (28 caracteres)',
  },
  access_key: {
    en: 'must be an access key of 1 to 64 letters and digits',
    'pt-BR': 'deve ser uma access key de 1 a 64 letras e dígitos',
    es: 'debe ser una access key de 1 a 64 letras y dígitos',
  },
};

/** How a broken field rule reads in each language. */
export function describeRule(rule: FieldRule, lang: Language): string {
  switch (rule.rule) {
    case 'required':
      return { en: 'is required', 'pt-BR': 'é obrigatório', es: 'es obligatorio' }[lang];
    case 'type':
      return (
        { en: 'must be ', 'pt-BR': 'deve ser ', es: 'debe ser ' }[lang] +
        rule.expected.map((type) => TYPE_NAMES[type][lang]).join(OR[lang])
      );
    case 'minItems':
      return {
        en: `must have at least ${rule.min} item(s)`,
        'pt-BR': `deve ter pelo menos ${rule.min} item(ns)`,
        es: `debe tener al menos ${rule.min} elemento(s)`,
      }[lang];
    case 'maxItems':
      return {
        en: `must have at most ${rule.max} item(s)`,
        'pt-BR': `deve ter no máximo ${rule.max} item(ns)`,
        es: `debe tener como máximo ${rule.max} elemento(s)`,
      }[lang];
    case 'invalid':
      return { en: 'is not valid', 'pt-BR': 'não é válido', es: 'no es válido' }[lang];
    case 'maxLength':
      return {
        en: `must be at most ${rule.max} characters long`,
        'pt-BR': `deve ter no máximo ${rule.max} caracteres`,
        es: `debe tener como máximo ${rule.max} caracteres`,
      }[lang];
    case 'minLength':
      return {
        en: `must be at least ${rule.min} characters long`,
        'pt-BR': `deve ter pelo menos ${rule.min} caracteres`,
        es: `debe tener al menos ${rule.min} caracteres`,
      }[lang];
    case 'oneOf':
      return {
        en: `must be one of ${list(rule.allowed)}`,
        'pt-BR': `deve ser um de ${list(rule.allowed)}`,
        es: `debe ser uno de ${list(rule.allowed)}`,
      }[lang];
    case 'format':
      return { en: 'must be ', 'pt-BR': 'deve ser ', es: 'debe ser ' }[lang] + FORMAT_NAMES[rule.format][lang];
    case 'minimum':
      return {
        en: `must be at least ${rule.min}`,
        'pt-BR': `deve ser no mínimo ${rule.min}`,
        es: `debe ser como mínimo ${rule.min}`,
      }[lang];
    case 'maximum':
      return {
        en: `must be at most ${rule.max}`,
        'pt-BR': `deve ser no máximo ${rule.max}`,
        es: `debe ser como máximo ${rule.max}`,
      }[lang];
    case 'amount': {
      const places =
        rule.decimals === 0
          ? {
              en: 'a whole number without leading zeros',
              'pt-BR': 'um número inteiro sem zeros à esquerda',
              es: 'un número entero sin ceros a la izquierda',
            }[lang]
          : {
              en: `a plain decimal number with at most ${rule.decimals} decimal places and no leading zeros`,
              'pt-BR': `um número decimal simples com no máximo ${rule.decimals} casas decimais e sem zeros à esquerda`,
              es: `un número decimal simple con como máximo ${rule.decimals} decimales y sin ceros a la izquierda`,
            }[lang];
      return rule.signed
        ? {
            en: `must be ${places} (a leading - for a debit), not 0, at most ${rule.maximum} either way, without exponent`,
            'pt-BR': `deve ser ${places} (com - à frente para um débito), diferente de 0, no máximo ${rule.maximum} em valor absoluto, sem expoente`,
            es: `debe ser ${places} (con - delante para un débito), distinto de 0, como máximo ${rule.maximum} en valor absoluto, sin exponente`,
          }[lang]
        : {
            en: `must be ${places} from ${rule.minimum} to ${rule.maximum}, without sign or exponent`,
            'pt-BR': `deve ser ${places} de ${rule.minimum} a ${rule.maximum}, sem sinal nem expoente`,
            es: `debe ser ${places} de ${rule.minimum} a ${rule.maximum}, sin signo ni exponente`,
          }[lang];
    }
  }
}

/**
 * The one map from failure to code and message. A new failure kind does not compile until it has
 * a code and a text in every language.
 */
const FAILURES: { [K in FailureKind]: { code: ApiCode; text: Texts<K> } } = {
  header_missing: {
    code: '307',
    text: {
      en: (f) => `header ${f.header} is missing`,
      'pt-BR': (f) => `o cabeçalho ${f.header} está ausente`,
      es: (f) => `falta el encabezado ${f.header}`,
    },
  },
  header_malformed: {
    code: '307',
    text: {
      en: (f) => `header ${f.header} ${HEADER_RULES[f.expected].en}`,
      'pt-BR': (f) => `o cabeçalho ${f.header} ${HEADER_RULES[f.expected]['pt-BR']}`,
      es: (f) => `el encabezado ${f.header} ${HEADER_RULES[f.expected].es}`,
    },
  },
  unknown_access_key: {
    code: '307',
    text: {
      en: () => 'access_key is not a known API key',
      'pt-BR': () => 'access_key não é uma chave de API conhecida',
      es: () => 'access_key no es una clave de API conocida',
    },
  },
  signature_mismatch: {
    code: '307',
    text: {
      en: () => 'sign does not match the request: check the string to sign and the secret key',
      'pt-BR': () => 'sign não corresponde à requisição: verifique a string assinada e a secret key',
      es: () => 'sign no corresponde a la solicitud: revise la cadena firmada y la secret key',
    },
  },
  timestamp_outside_window: {
    code: '307',
    text: {
      en: (f) => `timestamp is more than ${f.windowSeconds} s away from server time ${f.serverTime}`,
      'pt-BR': (f) => `timestamp difere em mais de ${f.windowSeconds} s do horário do servidor ${f.serverTime}`,
      es: (f) => `timestamp difiere en más de ${f.windowSeconds} s de la hora del servidor ${f.serverTime}`,
    },
  },
  nonce_reused: {
    code: '307',
    text: {
      en: () => 'nonce was already used with this access_key: send a new UUID with every request',
      'pt-BR': () => 'nonce já foi usado com esta access_key: envie um UUID novo em cada requisição',
      es: () => 'nonce ya fue usado con esta access_key: envíe un UUID nuevo en cada solicitud',
    },
  },
  key_not_active: {
    code: '301',
    text: {
      en: (f) => `API key is not active yet: it takes effect at ${iso(f.activeAt)}`,
      'pt-BR': (f) => `a chave de API ainda não está ativa: passa a valer em ${iso(f.activeAt)}`,
      es: (f) => `la clave de API aún no está activa: entra en vigor a las ${iso(f.activeAt)}`,
    },
  },
  key_disabled: {
    code: '301',
    text: {
      en: () => 'API key is disabled',
      'pt-BR': () => 'a chave de API está desativada',
      es: () => 'la clave de API está desactivada',
    },
  },
  key_deleted: {
    code: '301',
    text: {
      en: () => 'API key was deleted',
      'pt-BR': () => 'a chave de API foi excluída',
      es: () => 'la clave de API fue eliminada',
    },
  },
  ip_not_whitelisted: {
    code: '301',
    text: {
      en: (f) => `IP ${f.ip} is not in the API key's whitelist`,
      'pt-BR': (f) => `o IP ${f.ip} não está na lista de IPs permitidos da chave de API`,
      es: (f) => `la IP ${f.ip} no está en la lista de IPs permitidas de la clave de API`,
    },
  },
  permission_denied: {
    code: '301',
    text: {
      en: (f) => `API key lacks the permission ${f.permission} for this endpoint`,
      'pt-BR': (f) => `a chave de API não tem a permissão ${f.permission} para este endpoint`,
      es: (f) => `la clave de API no tiene el permiso ${f.permission} para este endpoint`,
    },
  },
  rate_limited: {
    code: '429',
    text: {
      en: (f) =>
        `too many requests: at most ${f.limitPerMinute} per minute per access_key; retry in ${f.retryAfterSeconds} s`,
      'pt-BR': (f) =>
        `requisições demais: no máximo ${f.limitPerMinute} por minuto por access_key; tente de novo em ${f.retryAfterSeconds} s`,
      es: (f) =>
        `demasiadas solicitudes: como máximo ${f.limitPerMinute} por minuto por access_key; reintente en ${f.retryAfterSeconds} s`,
    },
  },
  order_not_found: {
    code: '300',
    text: {
      en: () =>
        'order not found: no order of yours in this area has these ids (a query names one order by both externalOrderId and orderId)',
      'pt-BR': () =>
        'pedido não encontrado: nenhum pedido seu nesta área tem estes ids (uma consulta indica um pedido por externalOrderId e orderId juntos)',
      es: () =>
        'orden no encontrada: ninguna orden suya en esta área tiene estos ids (una consulta indica una orden por externalOrderId y orderId juntos)',
    },
  },
  voucher_unavailable: {
    code: '300',
    text: {
      en: (f) =>
        `no voucher: the order is not successful (status ${f.orderStatus}); a voucher exists once the payment succeeds`,
      'pt-BR': (f) =>
        `sem comprovante: o pedido não foi concluído com sucesso (status ${f.orderStatus}); o comprovante existe quando o pagamento é concluído`,
      es: (f) =>
        `sin comprobante: la orden no se completó con éxito (estado ${f.orderStatus}); el comprobante existe cuando el pago se completa`,
    },
  },
  duplicate_external_order_id: {
    code: '300',
    text: {
      en: (f) =>
        `externalOrderId ${f.externalOrderId} was already used with a different request: use a new externalOrderId, or repeat the original request exactly`,
      'pt-BR': (f) =>
        `o externalOrderId ${f.externalOrderId} já foi usado com outra requisição: use um novo externalOrderId ou repita exatamente a requisição original`,
      es: (f) =>
        `el externalOrderId ${f.externalOrderId} ya se usó con otra solicitud: use un nuevo externalOrderId o repita exactamente la solicitud original`,
    },
  },
  insufficient_balance: {
    code: '300',
    text: {
      en: (f) =>
        f.purpose === 'transfer'
          ? `insufficient balance: the transfer needs ${f.needed} ${f.currency} (amount + fee) and ${f.available} ${f.currency} is available`
          : `insufficient balance: the exchange needs ${f.needed} ${f.currency} (currencyAmount, fee included) and ${f.available} ${f.currency} is available`,
      'pt-BR': (f) =>
        f.purpose === 'transfer'
          ? `saldo insuficiente: a transferência precisa de ${f.needed} ${f.currency} (valor + tarifa) e há ${f.available} ${f.currency} disponível`
          : `saldo insuficiente: a conversão precisa de ${f.needed} ${f.currency} (currencyAmount, tarifa incluída) e há ${f.available} ${f.currency} disponível`,
      es: (f) =>
        f.purpose === 'transfer'
          ? `saldo insuficiente: la transferencia necesita ${f.needed} ${f.currency} (monto + comisión) y hay ${f.available} ${f.currency} disponible`
          : `saldo insuficiente: el cambio necesita ${f.needed} ${f.currency} (currencyAmount, comisión incluida) y hay ${f.available} ${f.currency} disponible`,
    },
  },
  rate_unavailable: {
    code: '300',
    text: {
      en: (f) =>
        `no exchange rate is configured for ${f.currency}/${f.token}: the operator has not set one, so no order can be priced`,
      'pt-BR': (f) =>
        `não há taxa de câmbio configurada para ${f.currency}/${f.token}: o operador não definiu uma, então nenhum pedido pode ser cotado`,
      es: (f) =>
        `no hay tipo de cambio configurado para ${f.currency}/${f.token}: el operador no definió uno, así que ninguna orden puede cotizarse`,
    },
  },
  channel_not_live: {
    code: '300',
    text: {
      en: (f) =>
        `${f.field} ${f.channelType} is not yet live on this gateway: its payments go through a real rail where ${f.channelType} is not connected yet`,
      'pt-BR': (f) =>
        `${f.field} ${f.channelType} ainda não está disponível neste gateway: os pagamentos passam por um trilho real em que ${f.channelType} ainda não está conectado`,
      es: (f) =>
        `${f.field} ${f.channelType} aún no está disponible en este gateway: los pagos pasan por un riel real en el que ${f.channelType} aún no está conectado`,
    },
  },
  chain_send_unavailable: {
    code: '300',
    text: {
      en: (f) =>
        `chainType ${f.chainType} cannot send tokens on this gateway: the operator has not set ${f.missing}; token → fiat orders are not affected`,
      'pt-BR': (f) =>
        `chainType ${f.chainType} não pode enviar tokens neste gateway: o operador não definiu ${f.missing}; pedidos de token para moeda não são afetados`,
      es: (f) =>
        `chainType ${f.chainType} no puede enviar tokens en este gateway: el operador no definió ${f.missing}; las órdenes de token a moneda no se ven afectadas`,
    },
  },
  exchange_amount_too_large: {
    code: '300',
    text: {
      en: (f) => `${f.field} is too large: ${f.detail}`,
      'pt-BR': (f) => `${f.field} é grande demais: ${f.detail}`,
      es: (f) => `${f.field} es demasiado grande: ${f.detail}`,
    },
  },
  exchange_amount_too_small: {
    code: '300',
    text: {
      en: (f) => `${f.field} is too small: ${f.detail}`,
      'pt-BR': (f) => `${f.field} é pequeno demais: ${f.detail}`,
      es: (f) => `${f.field} es demasiado pequeño: ${f.detail}`,
    },
  },
  route_not_found: {
    code: '300',
    text: {
      en: (f) => `no endpoint ${f.method} ${f.path}`,
      'pt-BR': (f) => `não existe o endpoint ${f.method} ${f.path}`,
      es: (f) => `no existe el endpoint ${f.method} ${f.path}`,
    },
  },
  unsupported_media_type: {
    code: '300',
    text: {
      en: (f) => `Content-Type ${f.contentType} is not accepted: send application/json;charset=utf-8`,
      'pt-BR': (f) => `Content-Type ${f.contentType} não é aceito: envie application/json;charset=utf-8`,
      es: (f) => `Content-Type ${f.contentType} no se acepta: envíe application/json;charset=utf-8`,
    },
  },
  body_not_json: {
    code: '300',
    text: {
      en: (f) => `body is not valid JSON: ${f.detail}`,
      'pt-BR': (f) => `o corpo não é um JSON válido: ${f.detail}`,
      es: (f) => `el cuerpo no es un JSON válido: ${f.detail}`,
    },
  },
  body_too_large: {
    code: '300',
    text: {
      en: (f) => `body is larger than ${f.limitBytes} bytes`,
      'pt-BR': (f) => `o corpo é maior que ${f.limitBytes} bytes`,
      es: (f) => `el cuerpo es mayor que ${f.limitBytes} bytes`,
    },
  },
  body_not_object: {
    code: '300',
    text: {
      en: () => 'body must be a JSON object',
      'pt-BR': () => 'o corpo deve ser um objeto JSON',
      es: () => 'el cuerpo debe ser un objeto JSON',
    },
  },
  body_too_deep: {
    code: '300',
    text: {
      en: (f) =>
        `${f.member || '(body)'} nests deeper than ${f.limit} levels (no member of this API nests more than two)`,
      'pt-BR': (f) =>
        `${f.member || '(body)'} aninha mais de ${f.limit} níveis (nenhum membro desta API aninha mais de dois)`,
      es: (f) =>
        `${f.member || '(body)'} anida más de ${f.limit} niveles (ningún miembro de esta API anida más de dos)`,
    },
  },
  text_not_unicode: {
    code: '300',
    text: {
      en: (f) =>
        `${f.member} holds a lone UTF-16 surrogate (a \\uD800–\\uDFFF escape without its pair), which is not Unicode text and cannot be kept as sent`,
      'pt-BR': (f) =>
        `${f.member} contém um surrogate UTF-16 isolado (um escape \\uD800–\\uDFFF sem o seu par), que não é texto Unicode e não pode ser guardado como enviado`,
      es: (f) =>
        `${f.member} contiene un surrogate UTF-16 aislado (un escape \\uD800–\\uDFFF sin su par), que no es texto Unicode y no puede guardarse tal como se envió`,
    },
  },
  text_has_nul: {
    code: '300',
    text: {
      en: (f) => `${f.member} holds a NUL character (\\u0000), which no text can keep`,
      'pt-BR': (f) => `${f.member} contém um caractere NUL (\\u0000), que nenhum texto pode guardar`,
      es: (f) => `${f.member} contiene un carácter NUL (\\u0000), que ningún texto puede guardar`,
    },
  },
  charset_not_utf8: {
    code: '300',
    text: {
      en: (f) => `the body must be UTF-8: charset=${f.charset} is not accepted (send application/json;charset=utf-8)`,
      'pt-BR': (f) =>
        `o corpo deve ser UTF-8: charset=${f.charset} não é aceito (envie application/json;charset=utf-8)`,
      es: (f) => `el cuerpo debe ser UTF-8: charset=${f.charset} no se acepta (envíe application/json;charset=utf-8)`,
    },
  },
  malformed_request: {
    code: '300',
    text: {
      en: (f) => REQUEST_PROBLEMS[f.problem].en,
      'pt-BR': (f) => REQUEST_PROBLEMS[f.problem]['pt-BR'],
      es: (f) => REQUEST_PROBLEMS[f.problem].es,
    },
  },
  unknown_fields: {
    code: '300',
    text: {
      en: (f) => `unknown field(s): ${list(f.fields)}`,
      'pt-BR': (f) => `campo(s) desconhecido(s): ${list(f.fields)}`,
      es: (f) => `campo(s) desconocido(s): ${list(f.fields)}`,
    },
  },
  invalid_field: {
    code: '300',
    text: {
      en: (f) => `${f.field} ${describeRule(f.rule, 'en')}`,
      'pt-BR': (f) => `${f.field} ${describeRule(f.rule, 'pt-BR')}`,
      es: (f) => `${f.field} ${describeRule(f.rule, 'es')}`,
    },
  },
  internal_error: {
    code: '500',
    text: {
      en: (f) => `internal error; quote request id ${f.requestId} to support`,
      'pt-BR': (f) => `erro interno; informe o id de requisição ${f.requestId} ao suporte`,
      es: (f) => `error interno; indique el id de solicitud ${f.requestId} a soporte`,
    },
  },
};

/** Code, HTTP status and message of a failure in the given language. */
export function describeFailure(failure: ApiFailure, lang: Language): { code: ApiCode; status: number; text: string } {
  const entry = FAILURES[failure.kind] as { code: ApiCode; text: Record<Language, (f: ApiFailure) => string> };
  return { code: entry.code, status: HTTP_STATUS_OF_CODE[entry.code], text: entry.text[lang](failure) };
}

/** Thrown (or returned by a validator) to end a request with an expected failure. */
export class ApiError extends Error {
  /** Extra English detail for keys in debug mode (never a secret). */
  debugDetail: string | undefined;

  constructor(readonly failure: ApiFailure) {
    super(describeFailure(failure, 'en').text);
    this.name = 'ApiError';
  }
}
