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

/**
 * The languages a page of a country offers in its language links: the country's own and English.
 * Brazil: Portuguese and English; Kenya: English and Swahili; the USDT page (priced in reais, paid
 * from a wallet anywhere): English, Portuguese and Spanish. A page in another language (chosen by
 * the browser or `?lang=`) still links to these.
 */
export const PAGE_LANGUAGES = {
  brazil: ['pt-BR', 'en'],
  kenya: ['en', 'sw'],
  usdt: ['en', 'pt-BR', 'es'],
} as const satisfies Record<string, readonly CashierLanguage[]>;

/**
 * The time zone each kind of page gives its deadlines and receipt times in, with the abbreviation
 * shown beside them (neither zone has daylight saving time, so one abbreviation holds all year):
 * Brazil's pages in Brasília time, Kenya's in East Africa time, the USDT page in UTC (its payers may
 * be anywhere; the chain's own times are UTC).
 */
export const PAGE_TIME_ZONES = {
  brazil: { zone: 'America/Sao_Paulo', label: 'BRT' },
  kenya: { zone: 'Africa/Nairobi', label: 'EAT' },
  usdt: { zone: 'UTC', label: 'UTC' },
} as const;

export type PageCountry = keyof typeof PAGE_TIME_ZONES;

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
  until: ['until {time}', 'até {time}', 'hasta el {time}', 'hadi {time}'],
  paidFor: ['For: {remark}', 'Referente a: {remark}', 'Concepto: {remark}', 'Kwa ajili ya: {remark}'],
  formTimeLeft: [
    'Time left to choose how to pay',
    'Tempo restante para escolher como pagar',
    'Tiempo restante para elegir cómo pagar',
    'Muda uliobaki wa kuchagua jinsi ya kulipa',
  ],
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
    'Your Pix code to copy and paste ("copia e cola")',
    'Seu código Pix copia e cola',
    'Tu código Pix para copiar y pegar ("copia e cola")',
    'Msimbo wako wa Pix wa kunakili na kubandika ("copia e cola")',
  ],
  pixCopy: ['Copy the Pix code', 'Copiar código Pix', 'Copiar el código Pix', 'Nakili msimbo wa Pix'],
  pixPaste: [
    'In your bank app, choose Pix, then "Pix copia e cola", paste the code and confirm.',
    'No app do seu banco, escolha Pix, depois "Pix copia e cola", cole o código e confirme.',
    'En la app de tu banco, elige Pix, luego "Pix copia e cola", pega el código y confirma.',
    'Kwenye programu ya benki yako, chagua Pix, kisha "Pix copia e cola", bandika msimbo na uthibitishe.',
  ],
  pixShowQr: [
    'Show the QR code (to pay from another device)',
    'Mostrar o QR code (para pagar de outro aparelho)',
    'Mostrar el código QR (para pagar desde otro dispositivo)',
    'Onyesha msimbo wa QR (kulipa kutoka kifaa kingine)',
  ],
  pixOnce: [
    'This code is for this payment only: it can be paid once, for exactly {amount}, within the time below.',
    'Este código vale só para este pagamento: pode ser pago uma vez, de exatamente {amount}, dentro do prazo abaixo.',
    'Este código sirve solo para este pago: se puede pagar una vez, por exactamente {amount}, dentro del plazo indicado abajo.',
    'Msimbo huu ni wa malipo haya pekee: unaweza kulipwa mara moja, kwa {amount} kamili, ndani ya muda ulioonyeshwa hapa chini.',
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
  mpesaCheckList: [
    'Keep the phone on and unlocked, with signal, and close any other M-Pesa prompt.|The request goes to {phone}: check that it is your M-Pesa number.',
    'Deixe o celular ligado e desbloqueado, com sinal, e feche qualquer outro pedido do M-Pesa.|O pedido vai para {phone}: confira se é o seu número do M-Pesa.',
    'Mantén el teléfono encendido y desbloqueado, con señal, y cierra cualquier otra solicitud de M-Pesa.|La solicitud va a {phone}: verifica que sea tu número de M-Pesa.',
    'Hakikisha simu imewashwa, haijafungwa na ina mtandao, na ufunge ombi lingine lolote la M-Pesa.|Ombi linaenda kwa {phone}: hakikisha ni nambari yako ya M-Pesa.',
  ],
  mpesaCheckWait: [
    'Wait until you may ask again, then send the request again.',
    'Espere até poder pedir de novo e envie o pedido de novo.',
    'Espera hasta poder pedirla otra vez y envía la solicitud de nuevo.',
    'Subiri hadi uweze kuomba tena, kisha tuma ombi tena.',
  ],
  mpesaWrongNumber: [
    'Not your number? {merchant} gave this number with the order and it cannot be changed on this page: ask {merchant} for a new payment link to your number.',
    'Não é o seu número? {merchant} informou este número com o pedido e ele não pode ser mudado nesta página: peça a {merchant} um novo link de pagamento para o seu número.',
    '¿No es tu número? {merchant} dio este número con el pedido y no se puede cambiar en esta página: pide a {merchant} un nuevo enlace de pago a tu número.',
    'Si nambari yako? {merchant} alitoa nambari hii pamoja na agizo na haiwezi kubadilishwa kwenye ukurasa huu: omba {merchant} kiungo kipya cha malipo kwa nambari yako.',
  ],
  mpesaNoManual: [
    'A payment sent by hand to a Paybill or till number cannot be matched to this order: if no request reaches you, ask {merchant} for another way to pay.',
    'Um pagamento enviado à mão para um número Paybill ou till não pode ser associado a este pedido: se nenhum pedido chegar, peça a {merchant} outra forma de pagar.',
    'Un pago enviado a mano a un número Paybill o till no se puede asociar a este pedido: si no te llega ninguna solicitud, pide a {merchant} otra forma de pagar.',
    'Malipo yanayotumwa kwa mkono kwa nambari ya Paybill au till hayawezi kuunganishwa na agizo hili: kama hupokei ombi lolote, omba {merchant} njia nyingine ya kulipa.',
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
  partTitle: ['Partly paid', 'Pago em parte', 'Pagado en parte', 'Imelipwa sehemu'],
  partText: [
    '{received} received, {left} still to pay.',
    '{received} recebidos, faltam {left} para pagar.',
    '{received} recibidos, faltan {left} por pagar.',
    '{received} zimepokelewa, {left} bado kulipwa.',
  ],
  partNext: [
    'The order asked for {amount}. This page takes no more payments: ask {merchant} how to pay the rest.',
    'O pedido era de {amount}. Esta página não recebe mais pagamentos: pergunte a {merchant} como pagar o restante.',
    'El pedido era de {amount}. Esta página no recibe más pagos: pregunta a {merchant} cómo pagar el resto.',
    'Agizo lilikuwa la {amount}. Ukurasa huu haupokei malipo zaidi: uliza {merchant} jinsi ya kulipa kiasi kilichobaki.',
  ],
  overTitle: ['Paid more than asked', 'Pago acima do valor', 'Pagado de más', 'Umelipa zaidi ya ulichoombwa'],
  overText: [
    '{received} received, {extra} more than the {amount} asked.',
    '{received} recebidos, {extra} a mais que os {amount} pedidos.',
    '{received} recibidos, {extra} más que los {amount} pedidos.',
    '{received} zimepokelewa, {extra} zaidi ya {amount} zilizoombwa.',
  ],
  overNext: [
    '{merchant} has been told of the difference: ask {merchant} about it.',
    '{merchant} foi avisado da diferença: fale com {merchant} sobre ela.',
    '{merchant} fue avisado de la diferencia: habla con {merchant} sobre ella.',
    '{merchant} amearifiwa kuhusu tofauti hii: wasiliana na {merchant} kuihusu.',
  ],
  receiptTitle: ['Receipt', 'Comprovante', 'Comprobante', 'Risiti'],
  receiptPaidAt: ['Paid on', 'Pago em', 'Pagado el', 'Ililipwa'],
  receiptMerchant: ['Paid to', 'Pago a', 'Pagado a', 'Imelipwa kwa'],
  receiptOrder: ["Merchant's order", 'Pedido da loja', 'Pedido del comercio', 'Agizo la mfanyabiashara'],
  receiptCashgate: ['Cashgate order', 'Pedido Cashgate', 'Pedido Cashgate', 'Agizo la Cashgate'],
  receiptMethod: ['Method', 'Forma de pagamento', 'Método', 'Njia'],
  receiptAmount: ['Amount paid', 'Valor pago', 'Importe pagado', 'Kiasi kilicholipwa'],
  receiptAsked: ['Amount asked', 'Valor do pedido', 'Importe del pedido', 'Kiasi kilichoombwa'],
  receiptFor: ['For', 'Referente a', 'Concepto', 'Kwa ajili ya'],
  receiptE2e: [
    'Pix end-to-end id',
    'ID fim a fim do Pix (E2E)',
    'ID de extremo a extremo del Pix',
    'Kitambulisho cha Pix (E2E)',
  ],
  receiptMpesa: ['M-Pesa receipt', 'Recibo M-Pesa', 'Recibo M-Pesa', 'Risiti ya M-Pesa'],
  receiptHash: ['Transaction hash', 'Hash da transação', 'Hash de la transacción', 'Hashi ya muamala'],
  receiptPrint: ['Print the receipt', 'Imprimir o comprovante', 'Imprimir el comprobante', 'Chapisha risiti'],
  method_MPESA: ['M-Pesa', 'M-Pesa', 'M-Pesa', 'M-Pesa'],
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
  refusedTokens: [
    'Your payment of {sent} was not accepted: this order must be paid with exactly {amount}. Ask {merchant} about the tokens you sent.',
    'Seu pagamento de {sent} não foi aceito: este pedido deve ser pago com exatamente {amount}. Fale com {merchant} sobre os tokens enviados.',
    'Tu pago de {sent} no fue aceptado: este pedido debe pagarse con exactamente {amount}. Habla con {merchant} sobre los tokens enviados.',
    'Malipo yako ya {sent} hayakukubaliwa: agizo hili lazima lilipwe kwa {amount} kamili. Wasiliana na {merchant} kuhusu tokeni ulizotuma.',
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
        // Spanish leaves 4-digit amounts ungrouped ("1234,56"); reais are written "1.234,56".
        ...(lang === 'es' && { useGrouping: 'always' as const }),
      }),
  );
  // Intl formats a decimal string exactly (no conversion to a binary float).
  const value = decimalText as unknown as number;
  // Spanish puts the symbol after the number ("42,50 R$"); a payer reads reais as Brazil writes
  // them, symbol first ("R$ 42,50"), with Spanish's own separators.
  if (lang === 'es') {
    const parts = format.formatToParts(value);
    const symbol = parts.find((p) => p.type === 'currency')?.value ?? currency;
    const number = parts
      .filter((p) => p.type !== 'currency')
      .map((p) => p.value)
      .join('')
      .trim();
    return `${symbol} ${number}`.replace(/\u00a0/g, ' ');
  }
  return format.format(value).replace(/\u00a0/g, ' ');
}

/**
 * A moment with its date, time and zone, as a payer of the page's country reads it:
 * "25 Nov 2026, 01:48 (BRT)" in English, "25 de nov. de 2026, 01:48 (BRT)" in Portuguese.
 */
export function formatDeadline(lang: CashierLanguage, ms: number, country: PageCountry): string {
  const { zone, label } = PAGE_TIME_ZONES[country];
  const text = formatter(
    `dt|${lang}|${zone}`,
    () =>
      new Intl.DateTimeFormat(dateLocale(lang), {
        day: 'numeric',
        month: 'short',
        year: 'numeric',
        hour: '2-digit',
        minute: '2-digit',
        hourCycle: 'h23',
        timeZone: zone,
      }),
  ).format(new Date(ms));
  return `${text.replace(/\u202f|\u00a0/g, ' ')} (${label})`;
}

/** The locale dates are written in: English day first ("25 Nov 2026", "26/11/2026"), as Kenya and Brazil write it, never the US month first. */
function dateLocale(lang: CashierLanguage): string {
  return lang === 'en' ? 'en-GB' : lang;
}

/** A date in the currency's time zone: "26/11/2026" in Portuguese and English. */
export function formatDate(lang: CashierLanguage, isoDate: string): string {
  return formatter(
    `d|${lang}`,
    () =>
      new Intl.DateTimeFormat(dateLocale(lang), { day: '2-digit', month: '2-digit', year: 'numeric', timeZone: 'UTC' }),
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
