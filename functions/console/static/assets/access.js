// Who the signed-in person is in this account (their role, from GET /api/v1/console/accounts) and
// what that role lets them do, so that the pages hide or disable what it cannot use. Only a
// courtesy: Herald checks every request, and a refusal (403 insufficient_scope) shows its sentence.
// The tables are generated from herald/domain/access.py into fields.js.
import { api, ApiError } from "./api.js";
import { ConsoleAccount, ROLE_ABILITIES, ROLES, SCOPE_ABILITIES } from "./fields.js";

let accounts = [];

// The person's accounts; an empty list when the console cannot tell (an older API without the
// route): then every control shows and the API decides.
export async function loadAccounts() {
  try {
    accounts = await api("GET", "/console/accounts");
  } catch (error) {
    if (!(error instanceof ApiError) || ![403, 404, 405].includes(error.status)) throw error;
    accounts = [];
  }
  return accounts;
}

export const knownAccounts = () => accounts;

export function currentRole() {
  return accounts.find((entry) => entry[ConsoleAccount.current])?.[ConsoleAccount.role] || null;
}

// Whether the person's role has ``ability``; true when the role is not known.
export function may(ability) {
  const role = currentRole();
  return role === null || (ROLE_ABILITIES[role] || []).includes(ability);
}

// Whether every ability of ``scopes`` is the person's too (a key cannot be given more than its maker holds).
export function mayHandOut(scopes) {
  return scopes.every((scope) => (SCOPE_ABILITIES[scope] || []).every(may));
}

export function mayGrant(role) {
  return (ROLE_ABILITIES[role] || []).every(may);
}

export function refusal(ability) {
  const role = currentRole();
  const able = ROLES.filter((name) => ROLE_ABILITIES[name].includes(ability));
  const listed = able.length > 1 ? `${able.slice(0, -1).join(", ")} or ${able.at(-1)}` : able.join("");
  return `Your role (${role}) cannot do this; ask an account member who is ${listed}.`;
}
