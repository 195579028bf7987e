// Herald's own JSON API, the same routes API-key clients use, authenticated by the session
// cookie (HttpOnly: this script never sees it). Answers are the API's envelope.
import { ErrorEnvelope } from "./fields.js";

export class ApiError extends Error {
  constructor(status, body) {
    super(body?.[ErrorEnvelope.error] || `Herald answered ${status}.`);
    this.status = status;
    this.code = body?.[ErrorEnvelope.code];
    this.body = body;
  }
}

export async function api(method, path, body) {
  const init = { method, credentials: "same-origin", headers: { Accept: "application/json" } };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  let answer;
  try {
    answer = await fetch(`/api/v1${path}`, init);
  } catch {
    throw new ApiError(0, { [ErrorEnvelope.error]: "Herald could not be reached; check the connection and retry." });
  }
  const document = await answer.json().catch(() => null);
  if (!answer.ok || !document?.success) throw new ApiError(answer.status, document);
  return document.data;
}

export const signedOut = (error) => error instanceof ApiError && ["invalid_session", "missing_api_key"].includes(error.code);
