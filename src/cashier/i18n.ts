/**
 * What the payer reads, in the four languages of the cashier: English, Brazilian Portuguese, Spanish
 * and Swahili. A page's language is the payer's `?lang=` choice, else the first supported language
 * of Accept-Language, else the one of the order's currency.
 */
import { rankedLanguageTags } from '../http/language.js';

export const CASHIER_LANGUAGES = ['en', 'pt-BR', 'es', 'sw'] as const;
export type CashierLanguage = (typeof CASHIER_LANGUAGES)[number];

export const LANGUAGE_NAMES: Record<CashierLanguage, string> = {
  en: 'English',
  'pt-BR': 'Português',
  es: 'Español',
  sw: 'Kiswahili',
};

/** The language of a currency's country, when the payer's browser names none we have. */
const CURRENCY_LANGUAGE: Record<string, CashierLanguage> = { BRL: 'pt-BR', MXN: 'es', KES: 'en' };

/** The time zone a currency's payers read times in. */
export const CURRENCY_TIME_ZONE: Record<string, string> = {
  BRL: 'America/Sao_Paulo',
  MXN: 'America/Mexico_City',
  KES: 'Africa/Nairobi',
};

function isCashierLanguage(value: unknown): value is CashierLanguage {
  return typeof value === 'string' && (CASHIER_LANGUAGES as readonly string[]).includes(value);
}

export function pickLanguage(input: {
  query?: unknown;
  acceptLanguage?: string | undefined;
  currency: string;
}): CashierLanguage {
  if (isCashierLanguage(input.query)) return input.query;
  for (const tag of rankedLanguageTags(input.acceptLanguage)) {
    const primary = tag.split('-')[0];
    if (primary === 'pt') return 'pt-BR';
    if (primary === 'es' || primary === 'en' || primary === 'sw') return primary;
  }
  return CURRENCY_LANGUAGE[input.currency] ?? 'en';
}

/** Each text as [en, pt-BR, es, sw]; `{name}` is filled from the call's parameters. */
const TEXTS = {
  payMerchant: ['Pay {merchant}', 'Pagar {merchant}', 'Pagar a {merchant}', 'Lipa {merchant}'],
  orderRef: ['Order {ref}', 'Pedido {ref}', 'Pedido {ref}', 'Agizo {ref}'],
  amountLabel: ['Amount to pay', 'Valor a pagar', 'Importe a pagar', 'Kiasi cha kulipa'],
  payee: ['Recipient: {payee}', 'Recebedor: {payee}', 'Beneficiario: {payee}', 'Mpokeaji: {payee}'],
  waiting: ['Waiting for your payment…', 'Aguardando seu pagamento…', 'Esperando tu pago…', 'Tunasubiri malipo yako…'],
  timeLeft: ['Time left to pay', 'Tempo restante para pagar', 'Tiempo restante para pagar', 'Muda uliobaki wa kulipa'],
  until: ['until {time}', 'até {time}', 'hasta las {time}', 'hadi {time}'],
  copy: ['Copy', 'Copiar', 'Copiar', 'Nakili'],
  copied: ['Copied', 'Copiado', 'Copiado', 'Imenakiliwa'],
  pixTitle: ['Pay with Pix', 'Pague com Pix', 'Paga con Pix', 'Lipa kwa Pix'],
  pixScan: [
    'Scan the QR code with your bank app',
    'Escaneie o QR code no app do seu banco',
    'Escanea el código QR con la app de tu banco',
    'Changanua msimbo wa QR kwa programu ya benki yako',
  ],
  pixQrTitle: [
    'Pix QR code for {amount}',
    'QR code Pix de {amount}',
    'Código QR Pix de {amount}',
    'Msimbo wa QR wa Pix wa {amount}',
  ],
  pixCodeLabel: [
    'Or copy this Pix code ("copia e cola")',
    'Ou copie este código Pix (copia e cola)',
    'O copia este código Pix ("copia e cola")',
    'Au nakili msimbo huu wa Pix ("copia e cola")',
  ],
  pixSteps: [
    'Open your bank app, choose Pix, then "pay with QR code" or "Pix copia e cola", and confirm.',
    'Abra o app do seu banco, escolha Pix, depois "pagar com QR code" ou "Pix copia e cola", e confirme.',
    'Abre la app de tu banco, elige Pix, luego "pagar con QR" o "Pix copia e cola", y confirma.',
    'Fungua programu ya benki yako, chagua Pix, kisha "lipa kwa QR" au "Pix copia e cola", na uthibitishe.',
  ],
  boletoTitle: ['Pay with boleto', 'Pague com boleto', 'Paga con boleto', 'Lipa kwa boleto'],
  boletoDue: ['Due date', 'Vencimento', 'Vencimiento', 'Tarehe ya mwisho'],
  boletoLine: [
    'Boleto number (linha digitável)',
    'Linha digitável',
    'Número del boleto (linha digitável)',
    'Nambari ya boleto (linha digitável)',
  ],
  boletoBarcode: [
    'Boleto barcode {line}',
    'Código de barras do boleto {line}',
    'Código de barras del boleto {line}',
    'Msimbo pau wa boleto {line}',
  ],
  boletoSteps: [
    'Pay in your bank app ("pay boleto"), at an ATM, a lottery shop or any bank, by the due date. It can take up to 3 business days to confirm.',
    'Pague no app do seu banco ("pagar boleto"), em caixa eletrônico, lotérica ou qualquer banco até o vencimento. A confirmação pode levar até 3 dias úteis.',
    'Paga en la app de tu banco ("pagar boleto"), en un cajero, una lotería o cualquier banco antes del vencimiento. La confirmación puede tardar hasta 3 días hábiles.',
    'Lipa kwenye programu ya benki yako ("lipa boleto"), ATM, duka la bahati nasibu au benki yoyote kabla ya tarehe ya mwisho. Uthibitisho unaweza kuchukua hadi siku 3 za kazi.',
  ],
  boletoPdf: ['Download the boleto (PDF)', 'Baixar o boleto (PDF)', 'Descargar el boleto (PDF)', 'Pakua boleto (PDF)'],
  mpesaTitle: ['Pay with M-Pesa', 'Pague com M-Pesa', 'Paga con M-Pesa', 'Lipa kwa M-Pesa'],
  mpesaSent: [
    'A payment request was sent to {phone}. Enter your M-Pesa PIN on your phone to pay.',
    'Um pedido de pagamento foi enviado para {phone}. Digite seu PIN do M-Pesa no celular para pagar.',
    'Se envió una solicitud de pago a {phone}. Ingresa tu PIN de M-Pesa en tu teléfono para pagar.',
    'Ombi la malipo limetumwa kwa {phone}. Weka PIN yako ya M-Pesa kwenye simu yako ili kulipa.',
  ],
  mpesaDeclined: [
    'The last request was not paid: {reason}. You can send it again.',
    'O último pedido não foi pago: {reason}. Você pode enviá-lo de novo.',
    'La última solicitud no se pagó: {reason}. Puedes enviarla otra vez.',
    'Ombi la mwisho halikulipwa: {reason}. Unaweza kulituma tena.',
  ],
  mpesaReason1032: ['you cancelled it', 'você cancelou', 'la cancelaste', 'uliliahirisha'],
  mpesaReason1037: [
    'your phone could not be reached',
    'não foi possível alcançar seu celular',
    'no se pudo contactar tu teléfono',
    'simu yako haikupatikana',
  ],
  mpesaReason2001: ['the PIN was wrong', 'o PIN estava errado', 'el PIN era incorrecto', 'PIN ilikuwa si sahihi'],
  mpesaReason1: [
    'there was not enough money in M-Pesa',
    'não havia saldo suficiente no M-Pesa',
    'no había saldo suficiente en M-Pesa',
    'hakukuwa na pesa za kutosha kwenye M-Pesa',
  ],
  mpesaReasonOther: ['M-Pesa declined it', 'o M-Pesa recusou', 'M-Pesa la rechazó', 'M-Pesa ilikataa'],
  mpesaWait: [
    'You can ask for a new request in {seconds} s.',
    'Você pode pedir um novo pedido em {seconds} s.',
    'Puedes pedir una nueva solicitud en {seconds} s.',
    'Unaweza kuomba ombi jipya baada ya sekunde {seconds}.',
  ],
  mpesaNoPrompt: [
    'No prompt on your phone?',
    'O pedido não apareceu no celular?',
    '¿No apareció la solicitud en tu teléfono?',
    'Hujapokea ombi kwenye simu yako?',
  ],
  mpesaChecks: [
    'Keep the phone on and unlocked, with signal, and check that the number is yours. Then send the request again.',
    'Deixe o celular ligado e desbloqueado, com sinal, e confira se o número é o seu. Depois envie o pedido de novo.',
    'Mantén el teléfono encendido y desbloqueado, con señal, y verifica que el número sea el tuyo. Luego envía la solicitud otra vez.',
    'Hakikisha simu imewashwa, haijafungwa na ina mtandao, na kwamba nambari ni yako. Kisha tuma ombi tena.',
  ],
  mpesaResend: [
    'Send the request again ({left} left)',
    'Enviar o pedido de novo (restam {left})',
    'Enviar la solicitud otra vez (quedan {left})',
    'Tuma ombi tena (yamebaki {left})',
  ],
  mpesaResentWait: [
    'A new request was sent. Check your phone. You can ask for another in {seconds} s.',
    'Um novo pedido foi enviado. Confira o celular. Você pode pedir outro em {seconds} s.',
    'Se envió una nueva solicitud. Revisa tu teléfono. Puedes pedir otra en {seconds} s.',
    'Ombi jipya limetumwa. Angalia simu yako. Unaweza kuomba jingine baada ya sekunde {seconds}.',
  ],
  mpesaLastSent: [
    'The last request was sent. Check your phone: the request cannot be sent again.',
    'O último pedido foi enviado. Confira o celular: o pedido não pode ser enviado de novo.',
    'Se envió la última solicitud. Revisa tu teléfono: la solicitud no se puede enviar otra vez.',
    'Ombi la mwisho limetumwa. Angalia simu yako: ombi haliwezi kutumwa tena.',
  ],
  mpesaNoMore: [
    'The request cannot be sent again. Ask the merchant for a new payment link.',
    'O pedido não pode ser enviado de novo. Peça um novo link de pagamento ao lojista.',
    'La solicitud no se puede enviar otra vez. Pide un nuevo enlace de pago al comercio.',
    'Ombi haliwezi kutumwa tena. Omba kiungo kipya cha malipo kutoka kwa mfanyabiashara.',
  ],
  usdtTitle: ['Pay with USDT (TRON)', 'Pague com USDT (TRON)', 'Paga con USDT (TRON)', 'Lipa kwa USDT (TRON)'],
  usdtSend: [
    'Send exactly this amount of USDT',
    'Envie exatamente este valor em USDT',
    'Envía exactamente este monto de USDT',
    'Tuma kiasi hiki kamili cha USDT',
  ],
  usdtAddress: [
    'To this TRON (TRC-20) address',
    'Para este endereço TRON (TRC-20)',
    'A esta dirección TRON (TRC-20)',
    'Kwa anwani hii ya TRON (TRC-20)',
  ],
  usdtQrTitle: [
    'QR code of the TRON address {address}',
    'QR code do endereço TRON {address}',
    'Código QR de la dirección TRON {address}',
    'Msimbo wa QR wa anwani ya TRON {address}',
  ],
  usdtWarning: [
    'Only USDT on the TRON network (TRC-20). Tokens sent on another network, or another token, are lost.',
    'Somente USDT na rede TRON (TRC-20). Tokens enviados por outra rede, ou outro token, serão perdidos.',
    'Solo USDT en la red TRON (TRC-20). Los tokens enviados por otra red, u otro token, se pierden.',
    'USDT kwenye mtandao wa TRON (TRC-20) pekee. Tokeni zilizotumwa kwa mtandao mwingine, au tokeni nyingine, zitapotea.',
  ],
  usdtRate: [
    '{tokens} at {rate} per USDT = {amount}',
    '{tokens} a {rate} por USDT = {amount}',
    '{tokens} a {rate} por USDT = {amount}',
    '{tokens} kwa {rate} kwa kila USDT = {amount}',
  ],
  paidTitle: ['Payment received', 'Pagamento recebido', 'Pago recibido', 'Malipo yamepokelewa'],
  paidThanks: [
    'Thank you. Your payment of {amount} was received.',
    'Obrigado. Seu pagamento de {amount} foi recebido.',
    'Gracias. Tu pago de {amount} fue recibido.',
    'Asante. Malipo yako ya {amount} yamepokelewa.',
  ],
  returnShop: ['Return to the shop', 'Voltar à loja', 'Volver a la tienda', 'Rudi dukani'],
  returningIn: [
    'Taking you back to {host} in {seconds} s.',
    'Voltando para {host} em {seconds} s.',
    'Volviendo a {host} en {seconds} s.',
    'Tunakurudisha kwa {host} baada ya sekunde {seconds}.',
  ],
  returnStay: ['Stay on this page', 'Ficar nesta página', 'Quedarme en esta página', 'Baki kwenye ukurasa huu'],
  returnStopped: [
    'You stay on this page.',
    'Você continua nesta página.',
    'Te quedas en esta página.',
    'Unabaki kwenye ukurasa huu.',
  ],
  returnLink: ['Return to {host}', 'Voltar para {host}', 'Volver a {host}', 'Rudi kwa {host}'],
  closePage: [
    'You can close this page.',
    'Você pode fechar esta página.',
    'Puedes cerrar esta página.',
    'Unaweza kufunga ukurasa huu.',
  ],
  expiredTitle: [
    'This payment has expired',
    'Este pagamento expirou',
    'Este pago venció',
    'Malipo haya yamepitwa na muda',
  ],
  expiredText: [
    'The time to pay ran out and nothing was charged. Ask the merchant for a new payment link.',
    'O prazo para pagar acabou e nada foi cobrado. Peça um novo link de pagamento ao lojista.',
    'El plazo para pagar terminó y no se cobró nada. Pide un nuevo enlace de pago al comercio.',
    'Muda wa kulipa umekwisha na hakuna kilichotozwa. Omba kiungo kipya cha malipo kutoka kwa mfanyabiashara.',
  ],
  cancelledTitle: [
    'This payment was cancelled',
    'Este pagamento foi cancelado',
    'Este pago fue cancelado',
    'Malipo haya yameghairiwa',
  ],
  cancelledText: [
    'Nothing was charged. Ask the merchant for a new payment link if you still want to pay.',
    'Nada foi cobrado. Peça um novo link de pagamento ao lojista se ainda quiser pagar.',
    'No se cobró nada. Pide un nuevo enlace de pago al comercio si aún quieres pagar.',
    'Hakuna kilichotozwa. Omba kiungo kipya cha malipo kutoka kwa mfanyabiashara ikiwa bado unataka kulipa.',
  ],
  notFoundTitle: ['Payment not found', 'Pagamento não encontrado', 'Pago no encontrado', 'Malipo hayakupatikana'],
  notFoundText: [
    'This link does not lead to a payment. Check the link you were given, or ask the merchant for a new one.',
    'Este link não leva a um pagamento. Confira o link recebido ou peça um novo ao lojista.',
    'Este enlace no lleva a un pago. Revisa el enlace recibido o pide uno nuevo al comercio.',
    'Kiungo hiki hakielekezi kwenye malipo. Kagua kiungo ulichopewa, au omba kipya kutoka kwa mfanyabiashara.',
  ],
  refused: [
    'Your payment of {sent} was returned: this order must be paid with exactly {amount}.',
    'Seu pagamento de {sent} foi devolvido: este pedido deve ser pago com exatamente {amount}.',
    'Tu pago de {sent} fue devuelto: este pedido debe pagarse con exactamente {amount}.',
    'Malipo yako ya {sent} yamerudishwa: agizo hili lazima lilipwe kwa {amount} kamili.',
  ],
  chooseTitle: ['How do you want to pay?', 'Como você quer pagar?', '¿Cómo quieres pagar?', 'Ungependa kulipa vipi?'],
  amountInput: ['Amount (R$)', 'Valor (R$)', 'Importe (R$)', 'Kiasi (R$)'],
  amountHint: ['For example 42,50', 'Por exemplo 42,50', 'Por ejemplo 42,50', 'Kwa mfano 42,50'],
  methodLegend: ['Payment method', 'Forma de pagamento', 'Método de pago', 'Njia ya malipo'],
  method_PIX: ['Pix', 'Pix', 'Pix', 'Pix'],
  method_PIX_DYNAMIC: [
    'Pix with a one-time QR code',
    'Pix com QR code de uso único',
    'Pix con código QR de un solo uso',
    'Pix kwa msimbo wa QR wa mara moja',
  ],
  method_BOLETO: ['Boleto', 'Boleto', 'Boleto', 'Boleto'],
  method_USDT_TRC20: [
    'USDT on TRON (TRC-20)',
    'USDT na rede TRON (TRC-20)',
    'USDT en TRON (TRC-20)',
    'USDT kwenye TRON (TRC-20)',
  ],
  hint_PIX: [
    'Instant, any Brazilian bank app',
    'Na hora, em qualquer app de banco',
    'Al instante, con cualquier app bancaria brasileña',
    'Papo hapo, programu yoyote ya benki ya Brazil',
  ],
  hint_PIX_DYNAMIC: [
    'Instant; the code is made for this payment only',
    'Na hora; o código vale só para este pagamento',
    'Al instante; el código sirve solo para este pago',
    'Papo hapo; msimbo ni wa malipo haya pekee',
  ],
  hint_BOLETO: [
    'Pay by the due date; confirms in up to 3 business days',
    'Pague até o vencimento; confirma em até 3 dias úteis',
    'Paga antes del vencimiento; se confirma en hasta 3 días hábiles',
    'Lipa kabla ya tarehe ya mwisho; inathibitishwa ndani ya siku 3 za kazi',
  ],
  hint_USDT_TRC20: [
    'From a crypto wallet, at the rate shown on the next page',
    'De uma carteira cripto, na cotação da próxima página',
    'Desde una billetera cripto, al tipo de cambio de la siguiente página',
    'Kutoka pochi ya crypto, kwa kiwango kitakachoonyeshwa ukurasa unaofuata',
  ],
  unavailable: ['unavailable right now', 'indisponível no momento', 'no disponible ahora', 'haipatikani kwa sasa'],
  documentInput: ['CPF or CNPJ', 'CPF ou CNPJ', 'CPF o CNPJ', 'CPF au CNPJ'],
  documentHint: [
    'Needed for Pix and boleto. Saved for your next payment to {merchant}.',
    'Necessário para Pix e boleto. Fica salvo para seu próximo pagamento a {merchant}.',
    'Necesario para Pix y boleto. Se guarda para tu próximo pago a {merchant}.',
    'Inahitajika kwa Pix na boleto. Itahifadhiwa kwa malipo yako yajayo kwa {merchant}.',
  ],
  documentSaved: [
    'Paying as {type} {number} (saved)',
    'Pagando como {type} {number} (salvo)',
    'Pagando como {type} {number} (guardado)',
    'Unalipa kama {type} {number} (imehifadhiwa)',
  ],
  continue: ['Continue', 'Continuar', 'Continuar', 'Endelea'],
  errorSummary: ['Please check the form', 'Confira o formulário', 'Revisa el formulario', 'Tafadhali kagua fomu'],
  error_amount: [
    'Enter an amount from {min} to {max}, with at most 2 decimals.',
    'Informe um valor de {min} a {max}, com no máximo 2 casas decimais.',
    'Ingresa un importe de {min} a {max}, con 2 decimales como máximo.',
    'Weka kiasi kuanzia {min} hadi {max}, chenye desimali zisizozidi 2.',
  ],
  error_choose: [
    'Choose a payment method.',
    'Escolha uma forma de pagamento.',
    'Elige un método de pago.',
    'Chagua njia ya malipo.',
  ],
  error_unavailable: [
    'This method is unavailable right now: choose another.',
    'Esta forma está indisponível no momento: escolha outra.',
    'Este método no está disponible ahora: elige otro.',
    'Njia hii haipatikani kwa sasa: chagua nyingine.',
  ],
  error_document: [
    'Enter a valid CPF (11 digits) or CNPJ (14 characters).',
    'Informe um CPF (11 dígitos) ou CNPJ (14 caracteres) válido.',
    'Ingresa un CPF (11 dígitos) o CNPJ (14 caracteres) válido.',
    'Weka CPF halali (tarakimu 11) au CNPJ (herufi 14).',
  ],
  language: ['Language', 'Idioma', 'Idioma', 'Lugha'],
  sandboxTitle: [
    'Sandbox: simulate the payer',
    'Sandbox: simule o pagador',
    'Sandbox: simula al pagador',
    'Sandbox: igiza mlipaji',
  ],
  sandboxText: [
    'Test mode: no real money moves.',
    'Modo de teste: nenhum dinheiro real se move.',
    'Modo de prueba: no se mueve dinero real.',
    'Hali ya majaribio: hakuna pesa halisi inayohamishwa.',
  ],
  sandboxPay: ['Pay {amount}', 'Pagar {amount}', 'Pagar {amount}', 'Lipa {amount}'],
  sandboxOther: ['Another amount ({unit})', 'Outro valor ({unit})', 'Otro importe ({unit})', 'Kiasi kingine ({unit})'],
  sandboxPayOther: ['Pay this amount', 'Pagar este valor', 'Pagar este importe', 'Lipa kiasi hiki'],
  sandboxCancel: ['Cancel', 'Cancelar', 'Cancelar', 'Ghairi'],
  sandboxTimeout: ['Time out', 'Expirar', 'Vencer', 'Muda uishe'],
  sandboxBadAmount: [
    'Enter an amount such as 10.50.',
    'Informe um valor como 10.50.',
    'Ingresa un importe como 10.50.',
    'Weka kiasi kama 10.50.',
  ],
} as const satisfies Record<string, readonly [string, string, string, string]>;

export type TextKey = keyof typeof TEXTS;
const INDEX: Record<CashierLanguage, number> = { en: 0, 'pt-BR': 1, es: 2, sw: 3 };

export type Translate = (key: TextKey, params?: Readonly<Record<string, string | number>>) => string;

/** The texts of one language: `t('payMerchant', { merchant })`. */
export function translator(lang: CashierLanguage): Translate {
  return (key, params = {}) =>
    (TEXTS[key][INDEX[lang]] ?? TEXTS[key][0]).replace(/\{(\w+)\}/g, (whole, name: string) =>
      Object.hasOwn(params, name) ? String(params[name]) : whole,
    );
}

/** Every language's texts, for the test that each key is translated. */
export function allTexts(): Readonly<Record<string, readonly string[]>> {
  return TEXTS;
}

/**
 * An amount as the payer's language writes it, from its exact decimal text (never a float):
 * "R$ 1.234,56" in Portuguese, "R$1,234.56" in English, "KES 1,500" in English.
 */
export function formatAmount(lang: CashierLanguage, decimalText: string, currency: string): string {
  // As many decimals as the amount has: KES in whole shillings, reais in cents, a rate in its own places.
  const decimals = decimalText.split('.')[1]?.length ?? 0;
  const format = formatter(
    `n|${lang}|${currency}|${decimals}`,
    () =>
      new Intl.NumberFormat(lang, {
        style: 'currency',
        currency,
        currencyDisplay: currency === 'BRL' ? 'narrowSymbol' : 'code',
        minimumFractionDigits: decimals,
        maximumFractionDigits: decimals,
      }),
  );
  // Intl formats a decimal string exactly (no conversion to a binary float).
  return format.format(decimalText as unknown as number).replace(/\u00a0/g, ' ');
}

/** A time of day in the currency's time zone: "14:35". */
export function formatTime(lang: CashierLanguage, ms: number, currency: string): string {
  const timeZone = CURRENCY_TIME_ZONE[currency] ?? 'UTC';
  return formatter(
    `t|${lang}|${timeZone}`,
    () => new Intl.DateTimeFormat(lang, { hour: '2-digit', minute: '2-digit', timeZone }),
  ).format(new Date(ms));
}

/** A date in the currency's time zone: "26/11/2026" in Portuguese. */
export function formatDate(lang: CashierLanguage, isoDate: string): string {
  return formatter(
    `d|${lang}`,
    () => new Intl.DateTimeFormat(lang, { day: '2-digit', month: '2-digit', year: 'numeric', timeZone: 'UTC' }),
  ).format(new Date(`${isoDate}T00:00:00Z`));
}

/** Intl formatters are costly to make and few differ (languages × currencies × decimals): each is made once. */
const formatters = new Map<string, Intl.NumberFormat | Intl.DateTimeFormat>();

function formatter<F extends Intl.NumberFormat | Intl.DateTimeFormat>(key: string, make: () => F): F {
  const known = formatters.get(key) as F | undefined;
  if (known !== undefined) return known;
  const made = make();
  formatters.set(key, made);
  return made;
}
