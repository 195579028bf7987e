// Providers (keys, their fallback order, inbound webhook URLs) and sending domains (DNS records).
import { api } from "./api.js";
import { badge, copyButton, field, h, replace, when } from "./dom.js";
import { act, currentAccount, link, rerender } from "./app.js";
import { Account, DnsRecord, Domain, DomainAtProvider, DomainRequest, PriorityRequest, Provider, ProviderKeyRequest, SupportedProvider } from "./fields.js";

// The providers a tenant can bring, as the API describes them (GET /providers), asked once per page
// load; NAMES maps each to its label.
let supported = null;
let NAMES = {};

export async function supportedProviders() {
  supported ??= api("GET", "/providers").then((list) => {
    NAMES = Object.fromEntries(list.map((vendor) => [vendor[SupportedProvider.provider], vendor[SupportedProvider.label]]));
    return list;
  }).catch((error) => {
    supported = null;
    throw error;
  });
  return supported;
}

export function listed(words) {
  return words.length > 1 ? `${words.slice(0, -1).join(", ")} or ${words.at(-1)}` : words.join("");
}

function freePlanNote(what, vendors) {
  return h("section", { class: "card notice" },
    h("h2", {}, `${what} need a paid plan`),
    h("p", {}, `On the free plan Herald sends through its own Amazon SES sender. Upgrade to bring your ${listed(vendors.map((vendor) => vendor[SupportedProvider.label]))} keys, with fallback in the order you choose.`),
    link("/console/billing", "See plans"));
}

export async function providersPage() {
  const paid = currentAccount()[Account.plan] !== "free";
  const [vendors, providers] = await Promise.all([supportedProviders(), api("GET", "/account/providers")]);
  return h("div", {},
    h("header", { class: "page-head" }, h("h1", {}, "Providers"),
      h("p", { class: "muted" }, "Each attempt tries your providers in this order and stops at the first that accepts.")),
    paid ? null : freePlanNote("Provider keys", vendors),
    providers.length ? providerTable(providers) : h("p", { class: "empty" }, "No provider key yet."),
    paid ? addProviderForm(vendors, providers) : null);
}

function providerTable(providers) {
  return h("table", { class: "table" },
    h("caption", { class: "visually-hidden" }, "Configured providers in the order they are tried"),
    h("thead", {}, h("tr", {}, ["Order", "Provider", "Key", "Added", "Inbound webhook URL", "Webhook secret", "Actions"].map((name) => h("th", { scope: "col" }, name)))),
    h("tbody", {}, providers.map((provider, index) => providerRow(provider, index, providers.length))));
}

function providerRow(provider, index, count) {
  const name = provider[Provider.provider];
  const url = provider[Provider.webhookUrl];
  return h("tr", { "data-provider": name },
    h("td", {}, String(provider[Provider.priority])),
    h("th", { scope: "row" }, NAMES[name] || name),
    h("td", {}, h("code", {}, `••••${provider[Provider.lastFour]}`)),
    h("td", {}, when(provider[Provider.addedAt])),
    h("td", { class: "url-cell" }, h("code", { class: "wrap" }, url), " ", copyButton(url, `${NAMES[name]} webhook URL`)),
    // The webhook secret is optional (it only lets Herald verify the provider's event webhooks):
    // its absence is neutral, not an error.
    h("td", {}, provider[Provider.hasWebhookSecret] ? badge("set") : h("span", { class: "badge" }, "not set (optional)")),
    h("td", {}, h("div", { class: "actions" },
      index > 0 ? moveButton(provider, -1, "Move up") : null,
      index < count - 1 ? moveButton(provider, 1, "Move down") : null,
      h("button", {
        type: "button",
        class: "button button-small button-danger",
        "aria-label": `Remove ${NAMES[name]}`,
        onclick: async () => {
          if (!confirm(`Remove the ${NAMES[name]} key? Herald stops sending through it at once.`)) return;
          if (await act(() => api("DELETE", `/account/providers/${name}`), `${NAMES[name]} removed`)) rerender();
        },
      }, "Remove"))));
}

function moveButton(provider, by, label) {
  const name = provider[Provider.provider];
  return h("button", {
    type: "button",
    class: "button button-small",
    "aria-label": `${label}: ${NAMES[name]}`,
    onclick: async () => {
      const moved = await act(() => api("PATCH", `/account/providers/${name}`, { [PriorityRequest.priority]: provider[Provider.priority] + by }), "Order changed");
      if (moved) rerender();
    },
  }, by < 0 ? "↑ Up" : "↓ Down");
}

function addProviderForm(vendors, providers) {
  const named = (vendor) => vendor[SupportedProvider.provider];
  const missing = vendors.find((vendor) => !providers.some((provider) => provider[Provider.provider] === named(vendor))) || vendors[0];
  const choice = h("select", { name: "provider" }, vendors.map((vendor) => h("option", { value: named(vendor), selected: vendor === missing }, vendor[SupportedProvider.label])));
  const apiKey = h("input", { type: "password", name: "apiKey", autocomplete: "off", required: true });
  const secret = h("input", { type: "password", name: "webhookSecret", autocomplete: "off" });
  const vendorFields = h("div", { class: "field-group" });
  let extra = {};
  const showVendor = () => {
    const vendor = vendors.find((item) => named(item) === choice.value);
    extra = vendorInputs(vendor);
    replace(vendorFields,
      field("API key", apiKey, `${vendor[SupportedProvider.apiKey]}, like ${vendor[SupportedProvider.keyExample]}`),
      extra.region ? field("Region", extra.region, "Where the account lives") : null,
      extra.token ? field("Account token", extra.token, `Optional: ${vendor[SupportedProvider.accountToken]}`) : null,
      field("Webhook secret", secret, `Optional: verifies the provider's event webhooks (${vendor[SupportedProvider.webhookSecret]})`));
  };
  choice.addEventListener("change", showVendor);
  showVendor();
  const submit = h("button", { type: "submit", class: "button button-primary" }, "Check and save");
  return h("section", { class: "card", "aria-labelledby": "add-provider" },
    h("h2", { id: "add-provider" }, "Add or replace a key"),
    h("p", { class: "muted" }, "Herald checks the key with the provider before storing it, encrypted; only its last four characters are shown again."),
    h("form", {
      class: "form-grid",
      onsubmit: async (event) => {
        event.preventDefault();
        submit.disabled = true;
        const region = extra.region && extra.region.selectedIndex > 0 ? `${extra.region.value}:` : "";
        const body = { [ProviderKeyRequest.apiKey]: region + apiKey.value.trim() };
        if (extra.token?.value.trim()) body[ProviderKeyRequest.accountToken] = extra.token.value.trim();
        if (secret.value.trim()) body[ProviderKeyRequest.webhookSecret] = secret.value.trim();
        const saved = await act(() => api("PUT", `/account/providers/${choice.value}`, body), `${NAMES[choice.value]} key checked and saved`);
        submit.disabled = false;
        if (saved) rerender();
      },
    },
    field("Provider", choice),
    vendorFields,
    submit));
}

// What only some providers ask for: a region (written before the key, "eu:…", for any but the
// first) and an account token.
function vendorInputs(vendor) {
  const regions = vendor[SupportedProvider.regions];
  return {
    region: regions.length > 1 ? h("select", { name: "region" }, regions.map((name) => h("option", { value: name }, name.toUpperCase()))) : null,
    token: vendor[SupportedProvider.accountToken] ? h("input", { type: "password", name: "accountToken", autocomplete: "off" }) : null,
  };
}

export async function domainsPage() {
  const paid = currentAccount()[Account.plan] !== "free";
  const [vendors, domains] = await Promise.all([supportedProviders(), api("GET", "/account/domains")]);
  return h("div", {},
    h("header", { class: "page-head" }, h("h1", {}, "Domains"),
      h("p", { class: "muted" }, "Send from your own domain once its DNS records verify with a provider.")),
    paid ? addDomainForm() : freePlanNote("Sending domains", vendors),
    domains.length ? domains.map(domainCard) : h("p", { class: "empty" }, "No sending domain yet."));
}

function addDomainForm() {
  const name = h("input", { type: "text", name: "domain", placeholder: "mail.example.com", required: true, autocomplete: "off" });
  const submit = h("button", { type: "submit", class: "button button-primary" }, "Add domain");
  return h("form", {
    class: "inline-form card",
    onsubmit: async (event) => {
      event.preventDefault();
      submit.disabled = true;
      const added = await act(() => api("POST", "/account/domains", { [DomainRequest.domain]: name.value.trim().toLowerCase() }), "Domain registered with your providers");
      submit.disabled = false;
      if (added) rerender();
    },
  }, field("Domain", name), submit);
}

// A domain's card; after Verify, with what the check found (``outcome``) at its top.
function domainCard(domain, outcome = null) {
  const name = domain[Domain.domain];
  const card = h("section", { class: "card", "aria-label": name, "data-domain": name },
    h("div", { class: "card-head" },
      h("h2", {}, name, " ", badge(domain[Domain.verified] ? "verified" : "unverified")),
      h("div", { class: "actions" },
        h("button", {
          type: "button",
          class: "button",
          onclick: async () => {
            const checked = await act(() => api("POST", `/account/domains/${encodeURIComponent(name)}/verify`));
            if (!checked) return;
            const fresh = domainCard(checked, verifyOutcome(checked));
            card.replaceWith(fresh);
            fresh.querySelector("[data-outcome]")?.focus();
          },
        }, "Verify"),
        h("button", {
          type: "button",
          class: "button button-danger",
          onclick: async () => {
            if (!confirm(`Remove ${name} from Herald and your providers?`)) return;
            if (await act(() => api("DELETE", `/account/domains/${encodeURIComponent(name)}`), "Domain removed")) rerender();
          },
        }, "Remove"))),
    outcome,
    domain[Domain.providers].map(atProvider));
  return card;
}

// What a Verify found, in one message: verified or not, and for each provider that has not verified
// it what it still waits for or the error it answered.
function verifyOutcome(domain) {
  const name = domain[Domain.domain];
  const verified = domain[Domain.verified];
  const lines = domain[Domain.providers].filter((entry) => !entry[DomainAtProvider.verified]).map(waitingFor);
  return h("div", { class: `message ${verified ? "message-success" : "message-info"}`, role: "status", tabindex: "-1", "data-outcome": "" },
    h("p", {}, verified ? `${name} is verified: you can send from it.` : `${name} is not verified yet.`),
    lines.length ? h("ul", {}, lines.map((line) => h("li", {}, line))) : null);
}

function waitingFor(entry) {
  const provider = NAMES[entry[DomainAtProvider.provider]] || entry[DomainAtProvider.provider];
  const [error, records] = [entry[DomainAtProvider.error], entry[DomainAtProvider.records]];
  if (error) return `${provider} answered: ${error}`;
  if (!records.length) return `${provider}: waiting for the provider to check the domain.`;
  const types = records.map((record) => record[DnsRecord.type].toUpperCase()).join(", ");
  return `${provider}: still waiting for ${records.length === 1 ? "its DNS record" : `its ${records.length} DNS records`} (${types}) below; DNS changes can take a few hours to show.`;
}

function atProvider(entry) {
  const [provider, error, records] = [entry[DomainAtProvider.provider], entry[DomainAtProvider.error], entry[DomainAtProvider.records]];
  const label = NAMES[provider] || provider;
  // A provider that failed before it named any record: one plain message, no empty table.
  if (error && !records.length) {
    return h("div", { class: "domain-provider" },
      h("h3", {}, label, " ", badge("pending")),
      h("p", { class: "message message-error" }, `${label} could not set up this domain and named no DNS records. It answered: ${error}`));
  }
  return h("div", { class: "domain-provider" },
    h("h3", {}, label, " ", badge(entry[DomainAtProvider.verified] ? "verified" : "pending")),
    error ? h("p", { class: "error-text" }, `${label} answered: ${error}`) : null,
    records.length
      ? h("table", { class: "table table-compact" },
        h("thead", {}, h("tr", {}, ["Type", "Host", "Value", ""].map((name) => h("th", { scope: "col" }, name)))),
        h("tbody", {}, records.map(dnsRow)))
      : h("p", { class: "muted" }, `${label} named no DNS records yet.`));
}

function dnsRow(record) {
  const [type, host, value, priority] = [record[DnsRecord.type], record[DnsRecord.host], record[DnsRecord.value], record[DnsRecord.priority]];
  return h("tr", {},
    h("td", {}, type.toUpperCase()),
    h("td", {}, h("code", { class: "wrap" }, host), " ", copyButton(host, `${type} host`)),
    h("td", {}, h("code", { class: "wrap" }, value), " ", copyButton(value, `${type} value`)),
    h("td", {}, priority !== null && priority !== undefined ? `priority ${priority}` : ""));
}
