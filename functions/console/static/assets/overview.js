// Overview: plan, usage against the quota this period, rate limit, and activity by day.
import { api } from "./api.js";
import { copyButton, day, h, number, replace, svg, when } from "./dom.js";
import { currentAccount, link } from "./app.js";
import { listed, supportedProviders } from "./sending.js";
import { Account, Activity, ActivityDay, ActivityTotals, JobPage, Limits, RateLimit, SupportedProvider, Usage } from "./fields.js";

let range = 30;

export async function overviewPage() {
  const account = currentAccount();
  const paid = account[Account.plan] !== "free";
  const [providers, fresh, vendors] = await Promise.all([
    paid ? api("GET", "/account/providers") : [],
    neverSent(account),
    paid ? supportedProviders() : [],
  ]);
  const canEmail = !paid || providers.length > 0;
  const chartBox = h("div", { class: "chart-box" });
  const page = h("div", {},
    h("header", { class: "page-head" }, h("h1", {}, "Overview"),
      h("p", { class: "muted" }, `Billing period ${when(account[Account.periodStart])} – ${when(account[Account.periodEnd])}`)),
    canEmail ? null : providerNeeded(vendors),
    fresh ? firstRun(account, canEmail) : null,
    h("div", { class: "cards" }, planCard(account), usageCard(account), rateCard(account)),
    chartBox);
  await showActivity(chartBox);
  return page;
}

// Whether the account has no job at all: only an account with no usage this period asks the
// listing (one entry), so the overview of an account in use costs no extra read.
async function neverSent(account) {
  if (account[Account.usage][Usage.total] > 0) return false;
  const newest = await api("GET", "/notifications/jobs?limit=1");
  return newest[JobPage.data].length === 0;
}

// A paid plan sends email only through the tenant's own providers (docs/console.md says why): until
// one is added, every email is refused with provider_required, and the overview says so first.
function providerNeeded(vendors) {
  return h("section", { class: "card notice notice-strong", role: "status", "data-notice": "provider" },
    h("h2", {}, "Add a provider to send email"),
    h("p", {}, `Your plan sends email through your own provider (${listed(vendors.map((vendor) => vendor[SupportedProvider.label]))}), not Herald's sender. `,
      "Until you add one, emails are refused with provider_required; webhooks go out as usual."),
    link("/console/providers", "Add a provider"));
}

// The first thing to do with a new account, until it has sent anything: one request with its own
// key. The console never holds the key after sign-up (only its hash is stored), so the command
// reads it from HERALD_API_KEY.
function firstRun(account, canEmail) {
  const command = firstRequest(account, canEmail);
  return h("section", { class: "card", "aria-labelledby": "first-run-title", "data-first-run": "" },
    h("h2", { id: "first-run-title" }, canEmail ? "Send your first email" : "Send your first webhook"),
    h("p", {}, "Put the API key you saved at sign-up in HERALD_API_KEY, then run:"),
    h("pre", { class: "payload" }, h("code", {}, command)),
    h("div", { class: "actions" }, copyButton(command, "Command")),
    h("p", { class: "muted" },
      "Lost the key? Rotate it on ", link("/console/keys", "Keys & signing"), ". ",
      canEmail && account[Account.plan] === "free" ? "Free-plan mail goes through Herald's own sender. " : "",
      "Your own email providers: ", link("/console/providers", "Providers"), ". Every route: ",
      h("a", { href: "/api/v1/docs" }, "the API documentation"), "."));
}

function firstRequest(account, canEmail) {
  const [route, body] = canEmail
    ? ["email", { to: account[Account.email], subject: "Hello from Herald", body: "<p>It works.</p>" }]
    : ["webhook", { url: "https://example.com/herald-test", payload: { hello: "world" } }];
  // The body goes between single quotes, where the shell ends a quote only at another one.
  const quoted = JSON.stringify(body).replaceAll("'", "'\\''");
  return [
    `curl -X POST ${location.origin}/api/v1/notifications/${route} \\`,
    '  -H "X-API-Key: $HERALD_API_KEY" -H "Content-Type: application/json" \\',
    `  -d '${quoted}'`,
  ].join("\n");
}

function planCard(account) {
  const plan = account[Account.plan];
  return h("section", { class: "card stat" },
    h("h2", {}, "Plan"),
    h("p", { class: "stat-value" }, plan[0].toUpperCase() + plan.slice(1)),
    h("p", { class: "muted" }, `Jobs kept ${account[Account.retentionDays]} days. `, link("/console/billing", "Billing")));
}

function usageCard(account) {
  // The free plan shares one quota between emails and webhooks; paid plans meter webhooks only
  // (their emails go through the tenant's own providers, unmetered), and the card says so.
  const limits = account[Account.limits];
  const usage = account[Account.usage];
  const shared = limits[Limits.sharedQuota];
  const quota = shared ? limits[Limits.monthlyEmails] : limits[Limits.monthlyWebhooks];
  const used = shared ? usage[Usage.total] : usage[Usage.webhooks];
  const counted = shared ? "Emails and webhooks" : "Webhooks";
  const fill = h("div", { class: "meter-fill" });
  fill.style.width = `${quota ? Math.min(100, Math.round((used / quota) * 100)) : 0}%`;
  return h("section", { class: "card stat" },
    h("h2", {}, "Usage this period"),
    h("p", { class: "stat-value" }, quota ? `${number(used)} / ${number(quota)}` : number(usage[Usage.total])),
    quota ? h("div", { class: "meter", role: "meter", "aria-valuemin": 0, "aria-valuemax": quota, "aria-valuenow": used, "aria-label": `${counted} used of the monthly quota` }, fill) : null,
    h("p", { class: "muted" }, quota ? `${counted} this period${shared ? "" : "; emails are unmetered on your plan"}` : "Unmetered"),
    h("p", { class: "muted" }, `${plural(usage[Usage.emails], "email")}, ${plural(usage[Usage.webhooks], "webhook")}; resets ${when(account[Account.periodEnd])}`));
}

function plural(count, noun) {
  return `${number(count)} ${noun}${count === 1 ? "" : "s"}`;
}

function rateCard(account) {
  return h("section", { class: "card stat" },
    h("h2", {}, "Rate limit"),
    h("p", { class: "stat-value" }, number(account[Account.rateLimit][RateLimit.requestsPerMinute])),
    h("p", { class: "muted" }, "requests a minute"));
}

async function showActivity(box) {
  const activity = await api("GET", `/account/activity?days=${range}`);
  const buttons = [7, 30, 90].map((days) => h("button", {
    type: "button",
    class: "segment",
    "aria-pressed": days === range ? "true" : "false",
    onclick: async () => {
      range = days;
      await showActivity(box);
      box.querySelector(`[data-days="${days}"]`)?.focus();
    },
    "data-days": days,
  }, `${days} days`));
  const successRate = activity[Activity.successRate];
  const rate = successRate === null ? "—" : `${(successRate * 100).toFixed(1)} %`;
  const totals = activity[Activity.totals];
  const days = activity[Activity.days].map(dayCounts);
  replace(box,
    h("section", { class: "card", "aria-labelledby": "activity-title" },
      h("div", { class: "card-head" },
        h("h2", { id: "activity-title" }, "Activity"),
        h("div", { class: "segments", role: "group", "aria-label": "Range" }, buttons)),
      h("dl", { class: "totals" },
        total("Accepted", totals[ActivityTotals.accepted]),
        total("Completed", totals[ActivityTotals.completed]),
        total("Failed", totals[ActivityTotals.failed]),
        total("Success rate", rate)),
      chart(days),
      h("p", { class: "legend" },
        h("span", { class: "key key-completed" }), "Completed ",
        h("span", { class: "key key-failed" }), "Failed ",
        h("span", { class: "key key-accepted" }), "Accepted"),
      table(days)));
}

// A day of the activity answer, as the chart and the table draw it.
function dayCounts(entry) {
  return {
    day: entry[ActivityDay.day],
    accepted: entry[ActivityDay.accepted],
    completed: entry[ActivityDay.completed],
    failed: entry[ActivityDay.failed],
  };
}

function total(label, value) {
  return h("div", { class: "total" }, h("dt", {}, label), h("dd", {}, typeof value === "number" ? number(value) : value));
}

// Bars of completed and failed jobs per day, and a line of the accepted ones.
function chart(days) {
  const width = 760;
  const height = 170;
  const top = Math.max(1, ...days.map((entry) => Math.max(entry.accepted, entry.completed + entry.failed)));
  const step = width / days.length;
  const y = (value) => height - (value / top) * (height - 12);
  const bars = days.map((entry, index) => {
    const x = index * step + step * 0.15;
    const barWidth = Math.max(1, step * 0.7);
    return svg("g", {},
      svg("rect", { class: "bar-completed", x, y: y(entry.completed), width: barWidth, height: height - y(entry.completed) }),
      svg("rect", { class: "bar-failed", x, y: y(entry.completed + entry.failed), width: barWidth, height: height - y(entry.failed) }),
      svg("title", {}, `${entry.day}: ${entry.accepted} accepted, ${entry.completed} completed, ${entry.failed} failed`));
  });
  const points = days.map((entry, index) => `${index * step + step / 2},${y(entry.accepted)}`).join(" ");
  const every = Math.ceil(days.length / 7);
  const last = days.length - 1;
  const labelled = (index) => index === last || (index % every === 0 && last - index >= every / 2);
  const anchor = (index) => (index === 0 ? "start" : index === last ? "end" : "middle");
  const labels = days.map((entry, index) => (labelled(index)
    ? svg("text", { class: "axis", x: index * step + step / 2, y: height + 16, "text-anchor": anchor(index) }, day(entry.day))
    : null));
  const empty = days.every((entry) => !entry.accepted && !entry.completed && !entry.failed);
  return svg("svg", { class: "chart", viewBox: `0 0 ${width} ${height + 22}`, role: "img", "aria-label": "Jobs by day; the table below has the figures" },
    svg("line", { class: "baseline", x1: 0, x2: width, y1: height, y2: height }),
    empty ? svg("text", { class: "chart-empty", x: width / 2, y: height / 2, "text-anchor": "middle" }, "No jobs in this range yet") : null,
    bars,
    svg("polyline", { class: "line-accepted", points, fill: "none" }),
    labels);
}

function table(days) {
  const rows = days.filter((entry) => entry.accepted || entry.completed || entry.failed).reverse();
  return h("details", { class: "day-table" },
    h("summary", {}, "Figures by day"),
    rows.length
      ? h("table", { class: "table table-compact" },
        h("thead", {}, h("tr", {}, ["Day", "Accepted", "Completed", "Failed"].map((name) => h("th", { scope: "col" }, name)))),
        h("tbody", {}, rows.map((entry) => h("tr", {},
          h("th", { scope: "row" }, link(`/console/jobs?day=${entry.day}`, entry.day)),
          h("td", {}, number(entry.accepted)), h("td", {}, number(entry.completed)), h("td", {}, number(entry.failed))))))
      : h("p", { class: "muted" }, "No jobs in this range yet."));
}
