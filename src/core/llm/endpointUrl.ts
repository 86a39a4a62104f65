// What kind of endpoint a base URL names: a plain OpenAI-compatible API root, an Azure OpenAI
// deployment (…/openai/deployments/X?api-version=…), or Azure's /openai/v1/ API. The query string
// is kept apart so it is never glued into the request path.

/** GA api-version sent to Azure deployment URLs that name none (stream_options is in it). */
export const DEFAULT_AZURE_API_VERSION = '2024-10-21';
/** Azure AI model inference (…services.ai.azure.com/models) requires a version of its own. */
const DEFAULT_AZURE_INFERENCE_API_VERSION = '2024-05-01-preview';

export type EndpointShape =
  | {
      kind: 'openai';
      /** The API root without query, e.g. https://api.openai.com/v1. */
      baseURL: string;
      /** Query parameters of the configured URL, sent with every request. */
      query: Record<string, string>;
    }
  | {
      kind: 'azure-deployment';
      /** …/openai; AzureOpenAI adds /deployments/<deployment or model>. */
      baseURL: string;
      /** From the URL; absent = the request's model names the deployment. */
      deployment?: string;
      apiVersion: string;
      query: Record<string, string>;
    }
  | {
      kind: 'azure-v1';
      /** …/openai/v1 (or …/models for Azure AI inference): no deployment in the path. */
      baseURL: string;
      /** Only when the URL names one (the v1 API needs none). */
      apiVersion?: string;
      query: Record<string, string>;
    };

export interface EndpointShapeOptions {
  /** speculate.azureApiVersion: used where the URL names no api-version. */
  apiVersion?: string;
}

const AZURE_HOST = /(^|\.)(openai\.azure\.com|cognitiveservices\.azure\.com|services\.ai\.azure\.com|openai\.azure\.us|openai\.azure\.cn)$/i;

export function parseEndpoint(raw: string, options: EndpointShapeOptions = {}): EndpointShape {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    return { kind: 'openai', baseURL: raw.trim().replace(/\/+$/, ''), query: {} };
  }
  const query: Record<string, string> = {};
  url.searchParams.forEach((value, key) => {
    query[key] = value;
  });
  const urlVersion = query['api-version'];
  delete query['api-version'];
  // A pasted full request URL still means its API root.
  let path = url.pathname.replace(/\/+$/, '').replace(/\/chat\/completions$/i, '').replace(/\/+$/, '');
  const origin = `${url.protocol}//${url.host}`;
  const azureHost = AZURE_HOST.test(url.hostname);

  const deployment = /^(.*\/openai)\/deployments\/([^/]+)$/i.exec(path);
  if (deployment) {
    return {
      kind: 'azure-deployment',
      baseURL: `${origin}${deployment[1]}`,
      deployment: decodeURIComponent(deployment[2]),
      apiVersion: urlVersion || options.apiVersion || DEFAULT_AZURE_API_VERSION,
      query,
    };
  }
  if (/\/openai\/v1$/i.test(path)) {
    return { kind: 'azure-v1', baseURL: `${origin}${path}`, ...(urlVersion ? { apiVersion: urlVersion } : {}), query };
  }
  if (azureHost && /\/models$/i.test(path)) {
    return { kind: 'azure-v1', baseURL: `${origin}${path}`, apiVersion: urlVersion || options.apiVersion || DEFAULT_AZURE_INFERENCE_API_VERSION, query };
  }
  if (azureHost && (path === '' || /\/openai$/i.test(path))) {
    if (path === '') path = '/openai';
    return { kind: 'azure-deployment', baseURL: `${origin}${path}`, apiVersion: urlVersion || options.apiVersion || DEFAULT_AZURE_API_VERSION, query };
  }
  if (urlVersion) query['api-version'] = urlVersion;
  return { kind: 'openai', baseURL: `${origin}${path}`, query };
}

/**
 * The key learned facts are stored under: scheme, host and path, never the query or credentials,
 * so a key in the URL (?key=…) never reaches the state file.
 */
export function endpointKey(raw: string): string {
  try {
    const url = new URL(raw.trim());
    const path = url.pathname.replace(/\/+$/, '').replace(/\/chat\/completions$/i, '');
    return `${url.protocol}//${url.host.toLowerCase()}${path}`;
  } catch {
    return raw.trim().replace(/[?#].*$/, '').replace(/\/+$/, '');
  }
}

/** Host name in lower case, '' for a URL that does not parse. */
export function hostOf(raw: string): string {
  try {
    return new URL(raw.trim()).hostname.toLowerCase();
  } catch {
    return '';
  }
}

/** The URL as it may be shown: no query (it can hold a key) and no user:password. */
export function displayUrl(raw: string): string {
  try {
    const url = new URL(raw.trim());
    return `${url.protocol}//${url.host}${url.pathname.replace(/\/+$/, '')}`;
  } catch {
    return raw.trim().replace(/[?#].*$/, '');
  }
}
