/*
 * heldout.h — the held-out conversations of the retention benchmark (retention.c): other domains,
 * other files, ids, versions, decisions, errors and fixes, other tools, another way of saying the
 * early turns, other filler words and rule-like filler, and another seed. Nothing in the
 * summariser was tuned on these: they were written before the first run on them, and their
 * misses are reported, never used to change the summariser's word lists. Included by
 * retention.c only.
 */
#ifndef RETENTION_HELDOUT_H
#define RETENTION_HELDOUT_H

static const struct domain heldout_domains[] = {
    {"data", "run_dbt", "pipelines/etl", "DATA", "Airflow", "rows per batch",
     "Do not backfill partitions older than day %d", "Let's go with incremental loads every %d minutes",
     "dbt run failed: relation stg_orders_%d does not exist in schema raw_%d",
     "resolved by recreating the staging view from snapshot %d",
     "we haven't yet moved the revenue dashboard for region %d",
     {"Why is the nightly run slower this week?", "Could you explain what the merge key does?",
      "How do analysts usually query this table?", "What would a good naming scheme be?",
      "Is there a cheaper way to store the raw events?", "What happens if a source sends duplicates?"},
     {"Most of the time goes into the joins on the largest fact table.",
      "The merge key decides which incoming row replaces which stored row.",
      "They mostly filter by day and by customer, then aggregate.",
      "Prefix each model with its layer so the lineage reads from left to right.",
      "Compressed columnar files keep the raw events small and quick to scan.",
      "Duplicates are dropped by the unique test before anything downstream sees them."}},
    {"infra", "kubectl_apply", "deploy/k8s", "OPS", "Kubernetes", "MiB memory request",
     "Everything must stay in the eu-west-%d region", "Going forward we run %d replicas behind the ingress",
     "CrashLoopBackOff: pod api-%d was OOMKilled at %d MiB",
     "the pods are stable again after raising the limit to %d Gi",
     "remind me to rotate the TLS certificate for cluster %d",
     {"What does the readiness probe check exactly?", "How do rolling updates avoid downtime?",
      "Can you walk me through the network policy?", "Why did the autoscaler not react sooner?",
      "Is the current logging setup enough?", "How should we label the namespaces?"},
     {"It calls the health endpoint and waits for a success before sending traffic.",
      "New pods come up before old ones stop, so capacity never drops.",
      "Only the frontend may reach the API, and only the API may reach the database.",
      "It looks at averages over a few minutes, so short spikes pass unnoticed.",
      "It covers the basics, though structured fields would make searching easier.",
      "Label them by team and by environment so costs and alerts can be split."}},
    {"finance", "ledger_export", "finance/recon", "INV", "SAP connector", "EUR tolerance",
     "Amounts under %d EUR are never written off automatically",
     "We agreed to book exchange differences to account 4%d",
     "reconciliation mismatch RC-%d: %d lines unmatched",
     "it balances now that the duplicate batch %d is excluded",
     "the auditors still want the bank export for quarter %d",
     {"How does the matching rule treat partial payments?", "What is the usual month-end checklist?",
      "Can you explain the clearing account?", "Why do card fees show up separately?",
      "How long do we keep the statements?", "What should the summary for the controller contain?"},
     {"Partial payments stay open until the remaining amount arrives or is written off.",
      "Close the sub-ledgers, reconcile the banks, then review the accruals.",
      "It holds amounts in transit until both sides of a transfer are booked.",
      "The processor settles the gross amount and charges its fees in a second line.",
      "Statements are kept for the legal retention period and then archived.",
      "Totals per entity, open differences and anything that needs a decision."}},
    {"mobile", "gradle_build", "app/src/main", "MOB", "Android SDK", "KB download budget",
     "Keep the minimum SDK at %d, no exceptions", "We will ship the offline mode behind flag beta_%d",
     "Execution failed for task mergeDebugResources: duplicate resource string_%d in values-%d",
     "got the build green by deleting the duplicate strings in module %d",
     "one thing left is translating the onboarding screens for locale %d",
     {"How do we keep the start-up time short?", "What is the cleanest way to handle deep links?",
      "Can you review the navigation structure?", "Why does the list stutter on older phones?",
      "How should the app behave without a network?", "What do the store guidelines say about permissions?"},
     {"Defer the heavy work until after the first screen is drawn.",
      "Route every link through one handler that maps it to a screen.",
      "The structure is sound; two of the nested graphs could be merged.",
      "The rows are measured again on every scroll; caching their height helps.",
      "Show what is cached, queue the changes and sync when the network returns.",
      "Ask for a permission only when the feature that needs it is used."}},
};

/* Agent loops of the held-out set: other words, other rule-like filler, other tools. */
static const struct loop_vocab heldout_loop = {
    {"ledger", "replica", "vector", "bucket", "cursor", "stream", "batch", "offset"}, 8,
    {"we must always check the", "do not ever skip the", "it is required to sync every"},
    {"sql_query", "http_probe", "list_objects", "tail_logs"}, 4,
};

/* The early turns of a held-out conversation: the same kinds of fact as the tuned set, said
 * another way and in another order. */
static void plant_heldout(struct conv *c, const struct domain *d, int k, int v)
{
    snprintf(c->needle[F_PATH], 512, "%s/%s_%d.%s", d->dir, k % 2 ? "job" : "module", v,
             k % 4 == 0 ? "sql" : k % 4 == 1 ? "yaml" : k % 4 == 2 ? "csv" : "kt");
    snprintf(c->needle[F_ID], 512, "%s#%d", d->idp, 7000 + v);
    snprintf(c->needle[F_VERSION], 512, "v%d.%d.%d", 1 + k % 4, (k * 7) % 13, k % 9);
    snprintf(c->needle[F_NUMBER], 512, "%d %s", 250 + v * 7, d->unit);
    char buf[512];
    snprintf(buf, sizeof buf, d->constraint, v % 90 + 3);
    snprintf(c->needle[F_CONSTRAINT], 512, "%s", buf);
    snprintf(buf, sizeof buf, d->decision, v % 12 + 2);
    snprintf(c->needle[F_DECISION], 512, "%s", buf);
    snprintf(buf, sizeof buf, d->error, v, v % 50 + 1);
    snprintf(c->needle[F_ERROR], 512, "%s", buf);
    snprintf(buf, sizeof buf, d->fix, v % 8 + 2);
    snprintf(c->needle[F_FIX], 512, "%s", buf);
    snprintf(buf, sizeof buf, d->task, v % 5 + 1);
    snprintf(c->needle[F_TASK], 512, "%s", buf);

    add(c, MN_ROLE_USER,
        dupf("Picking up %s today: ticket %s, the file is %s and we run %s %s.", d->name, c->needle[F_ID],
             c->needle[F_PATH], d->product, c->needle[F_VERSION]),
        NULL, NULL, NULL);
    add(c, MN_ROLE_ASSISTANT, dupf("Got it. For reference, the budget here is %s.", c->needle[F_NUMBER]), NULL, NULL,
        NULL);
    add(c, MN_ROLE_USER, dupf("One rule: %s.", c->needle[F_CONSTRAINT]), NULL, NULL, NULL);
    add(c, MN_ROLE_ASSISTANT, dupf("Understood, I will respect that."), NULL, NULL, NULL);
    add(c, MN_ROLE_USER, dupf("Which way should we go?"), NULL, NULL, NULL);
    add(c, MN_ROLE_ASSISTANT, dupf("%s; it is the simplest option.", c->needle[F_DECISION]), NULL, NULL, NULL);
    add(c, MN_ROLE_USER, dupf("Sounds right, go ahead and try it."), NULL, NULL, NULL);
    add(c, MN_ROLE_ASSISTANT, NULL,
        dupf("[{\"id\":\"h1\",\"type\":\"function\",\"function\":{\"name\":\"%s\",\"arguments\":\"{\\\"ref\\\":\\\"%s\\\"}\"}}]",
             d->tool, c->needle[F_ID]),
        NULL, NULL);
    add(c, MN_ROLE_TOOL, dupf("exit code 1\n%s", c->needle[F_ERROR]), NULL, strdup("h1"), strdup(d->tool));
    add(c, MN_ROLE_ASSISTANT, dupf("Looked into it and %s.", c->needle[F_FIX]), NULL, NULL, NULL);
    add(c, MN_ROLE_USER, dupf("Nice work. Also, %s.", c->needle[F_TASK]), NULL, NULL, NULL);
    add(c, MN_ROLE_ASSISTANT, dupf("Added to my list."), NULL, NULL, NULL);
}

static const struct set heldout_set = {"held-out", heldout_domains, 424242u, 104729u, 300, 53, &heldout_loop,
                                       plant_heldout, "Status check: what is finished and what remains?"};

#endif
