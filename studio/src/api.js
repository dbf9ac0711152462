// The Choreo API as the page uses it: JSON requests with the key as a Bearer header, and every
// failure turned into an ApiError whose message a person can read.

const KEY_SLOT = 'choreo.apiKey';

export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

export const session = {
  get key() { return sessionStorage.getItem(KEY_SLOT); },
  set key(value) {
    if (value) sessionStorage.setItem(KEY_SLOT, value);
    else sessionStorage.removeItem(KEY_SLOT);
  },
};

/** `text` as a sentence: a capital first letter and one full stop at the end (none doubled, no "?."). */
export function sentence(text) {
  const words = String(text ?? '').trim().replace(/[\s.;:,?!]+$/u, '');
  if (!words) return '';
  return `${words[0].toUpperCase()}${words.slice(1)}.`;
}

/** Plain words for a refusal, by HTTP status and the API's error code: one or two sentences. */
export function plainWords(status, code, message) {
  if (status === 0) return 'The Choreo server does not answer. Check that it is running; the page keeps trying.';
  if (status === 401) return `Your API key was refused (${String(message).replace(/[\s.]+$/u, '')}). It may have been revoked: sign in with a valid key.`;
  if (status === 403) return sentence(`This key may not do that: ${message}`);
  if (status === 413) return sentence(`Too large: ${message}`);
  if (status === 415) return sentence(`Not a song this service reads: ${message}`);
  if (status === 429) return `${sentence(`Too many requests: ${message}`)} Waiting before trying again.`;
  if (status >= 500) return sentence(`The server had a problem (${code}): ${message}`);
  return sentence(message) || `The request failed (${status}).`;
}

async function errorFrom(response) {
  let code = 'http_error';
  let message = response.statusText;
  try {
    const body = await response.json();
    code = body.error?.code ?? code;
    message = body.error?.message ?? message;
  } catch { /* not our JSON error body */ }
  return new ApiError(response.status, code, plainWords(response.status, code, message));
}

/** One request; resolves to the parsed JSON body (null for 204), rejects with ApiError. */
export async function api(method, path, { json, key = session.key } = {}) {
  const headers = {};
  if (key) headers.Authorization = `Bearer ${key}`;
  if (json !== undefined) headers['Content-Type'] = 'application/json';
  let response;
  try {
    response = await fetch(path, { method, headers, body: json === undefined ? undefined : JSON.stringify(json) });
  } catch {
    throw new ApiError(0, 'server_down', plainWords(0));
  }
  if (!response.ok) throw await errorFrom(response);
  return response.status === 204 ? null : response.json();
}

/** An XMLHttpRequest with upload progress (fetch has none), resolving to its status and body text. */
export function sendWithProgress(method, url, body, { headers = {}, onProgress } = {}) {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open(method, url);
    for (const [name, value] of Object.entries(headers)) xhr.setRequestHeader(name, value);
    xhr.upload.onprogress = (event) => { if (event.lengthComputable) onProgress?.(event.loaded / event.total); };
    xhr.onload = () => resolve({ status: xhr.status, text: xhr.responseText });
    xhr.onerror = () => reject(new ApiError(0, 'server_down', `Could not reach ${new URL(url, location.href).host}.`));
    xhr.send(body);
  });
}

/** The ApiError of a failed XHR answer from our API (JSON error body) or from storage (XML). */
export function xhrError(status, text) {
  let code = 'http_error';
  let message = text.slice(0, 200);
  try {
    const body = JSON.parse(text);
    code = body.error?.code ?? code;
    message = body.error?.message ?? message;
  } catch { /* storage answers in XML */ }
  return new ApiError(status, code, plainWords(status, code, message));
}
