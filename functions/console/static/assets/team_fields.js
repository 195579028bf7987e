// The field names of the members, audit-log and account-switching answers and requests (issue 38),
// written by hand until their models exist in layers/herald/herald/http/: once they do, the pages
// import these names from the generated fields.js instead and this module goes away
// (tests/unit/test_console_fields.py fails while a name here is also a generated model's).
const names = (...fields) => Object.freeze(Object.fromEntries(fields.map((field) => [field, field])));

// GET /api/v1/account/members, POST (201), PATCH /{id}
export const Member = names("id", "email", "role", "status", "invitedBy", "createdAt", "joinedAt");
export const InviteMemberRequest = names("email", "role");
export const MemberRoleRequest = names("role");
// GET /api/v1/account/audit?action=&actor=&cursor=
export const AuditActor = names("type", "id", "name");
export const AuditEntry = names("id", "at", "action", "target", "actor", "ip", "details");
export const AuditPage = names("entries", "nextCursor");
// GET /api/v1/console/accounts, POST /api/v1/console/switch
export const ConsoleAccount = names("tenantId", "name", "role", "current");
export const SwitchAccountRequest = names("tenantId");
