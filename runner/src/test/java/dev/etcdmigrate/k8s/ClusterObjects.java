package dev.etcdmigrate.k8s;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.etcdmigrate.it.support.Poll;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * A small but realistic cluster written through the API server: namespaces, configmaps, secrets,
 * events (etcd keys with a lease: --event-ttl), RBAC roles and bindings, a coordination lease that is
 * renewed, a CRD with custom objects; some objects updated, some deleted. Records what a later API
 * server must serve: every object's uid and resourceVersion, the configmaps of one namespace as a list
 * at an old resourceVersion, and the watch events that followed it.
 */
public final class ClusterObjects {

    public static final String[] NAMESPACES = {"team-a", "team-b"};
    /** The collection whose list and watch at an old resourceVersion are checked. */
    public static final String WATCHED = "/api/v1/namespaces/team-a/configmaps";

    /** Identity of a stored object as the API server reports it. */
    public record Stored(String uid, String resourceVersion) {}

    /** A watch event expected after {@link #oldResourceVersion}. */
    public record Expected(String type, String name, String resourceVersion) {}

    /** path -> uid and resourceVersion of every live object written here. */
    public final Map<String, Stored> live = new TreeMap<>();

    public final List<String> deleted = new ArrayList<>();
    /** The list resourceVersion of {@link #WATCHED} after the creates, before any update or delete. */
    public String oldResourceVersion;
    /** name -> resourceVersion of {@link #WATCHED}'s items at {@link #oldResourceVersion}. */
    public final Map<String, String> listAtOld = new TreeMap<>();

    public final List<Expected> eventsAfterOld = new ArrayList<>();

    /** metav1.MicroTime's wire format. */
    private static final java.time.format.DateTimeFormatter MICRO_TIME = java.time.format.DateTimeFormatter.ofPattern(
                    "yyyy-MM-dd'T'HH:mm:ss.SSSSSS'Z'")
            .withZone(java.time.ZoneOffset.UTC);

    private ClusterObjects() {}

    public static ClusterObjects write(KubeClient c) throws Exception {
        ClusterObjects o = new ClusterObjects();
        o.createCrd(c);
        for (String ns : NAMESPACES) {
            o.create(
                    c,
                    "/api/v1/namespaces",
                    "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"%s\",\"labels\":{\"team\":\"%s\"}}}"
                            .formatted(ns, ns));
        }
        for (String ns : NAMESPACES) {
            for (int i = 0; i < 5; i++) {
                o.create(c, "/api/v1/namespaces/" + ns + "/configmaps", """
                        {"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm-%d","labels":{"app":"web"}},
                         "data":{"config.yaml":"replicas: %d\\nlog: info\\n","feature":"on"}}""".formatted(i, i));
            }
            for (int i = 0; i < 3; i++) {
                o.create(c, "/api/v1/namespaces/" + ns + "/secrets", """
                        {"apiVersion":"v1","kind":"Secret","metadata":{"name":"s-%d"},"type":"Opaque",
                         "data":{"password":"%s"}}""".formatted(
                                i, java.util.Base64.getEncoder().encodeToString(("pw-" + ns + i).getBytes())));
            }
            for (int i = 0; i < 5; i++) {
                o.create(c, "/api/v1/namespaces/" + ns + "/events", """
                        {"apiVersion":"v1","kind":"Event","metadata":{"name":"cm-%d.%d"},"type":"Normal","reason":"Configured",
                         "message":"configmap %d configured","involvedObject":{"kind":"ConfigMap","namespace":"%s","name":"cm-%d"},
                         "source":{"component":"etcd-migrate-test"},"count":1}""".formatted(i, i + 1000, i, ns, i));
            }
            o.create(c, "/apis/rbac.authorization.k8s.io/v1/namespaces/" + ns + "/roles", """
                    {"apiVersion":"rbac.authorization.k8s.io/v1","kind":"Role","metadata":{"name":"config-reader"},
                     "rules":[{"apiGroups":[""],"resources":["configmaps"],"verbs":["get","list","watch"]}]}""");
            o.create(c, "/apis/rbac.authorization.k8s.io/v1/namespaces/" + ns + "/rolebindings", """
                    {"apiVersion":"rbac.authorization.k8s.io/v1","kind":"RoleBinding","metadata":{"name":"alice-reads-config"},
                     "subjects":[{"kind":"User","name":"alice","apiGroup":"rbac.authorization.k8s.io"}],
                     "roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"Role","name":"config-reader"}}""");
            o.create(c, "/apis/coordination.k8s.io/v1/namespaces/" + ns + "/leases", """
                    {"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"leader"},
                     "spec":{"holderIdentity":"node-1","leaseDurationSeconds":15,"renewTime":"%s"}}""".formatted(microTime()));
            for (int i = 0; i < 4; i++) {
                o.create(c, "/apis/example.com/v1/namespaces/" + ns + "/widgets", """
                        {"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w-%d"},"spec":{"size":%d,"color":"blue"}}""".formatted(i, i));
            }
        }

        // the old resourceVersion: the watched collection before anything below changes it
        ObjectNode before = c.list(WATCHED, "");
        o.oldResourceVersion = before.path("metadata").path("resourceVersion").asText();
        before.path("items")
                .forEach(i -> o.listAtOld.put(
                        i.path("metadata").path("name").asText(),
                        i.path("metadata").path("resourceVersion").asText()));

        for (String name : List.of("cm-1", "cm-2")) {
            ObjectNode cm = o.modify(c, WATCHED + "/" + name, n -> ((ObjectNode) n.path("data")).put("feature", "off"));
            o.eventsAfterOld.add(new Expected("MODIFIED", name, rv(cm)));
        }
        o.modify(
                c,
                "/api/v1/namespaces/team-b/secrets/s-0",
                n -> ((ObjectNode) n.path("data")).put("password", "cm90YXRlZA=="));
        for (String ns : NAMESPACES) {
            o.modify(
                    c,
                    "/apis/coordination.k8s.io/v1/namespaces/" + ns + "/leases/leader",
                    n -> ((ObjectNode) n.path("spec")).put("renewTime", microTime()));
            o.modify(
                    c,
                    "/apis/example.com/v1/namespaces/" + ns + "/widgets/w-1",
                    n -> ((ObjectNode) n.path("spec")).put("color", "red"));
        }
        o.remove(c, WATCHED + "/cm-3");
        // a DELETED event carries the object at its deletion revision, which the response does not show
        o.eventsAfterOld.add(new Expected("DELETED", "cm-3", null));
        o.remove(c, "/api/v1/namespaces/team-b/secrets/s-2");
        o.remove(c, "/apis/example.com/v1/namespaces/team-a/widgets/w-3");
        o.remove(c, "/apis/rbac.authorization.k8s.io/v1/namespaces/team-b/rolebindings/alice-reads-config");
        return o;
    }

    private void createCrd(KubeClient c) throws Exception {
        String crd = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
        create(c, crd, """
                {"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"widgets.example.com"},
                 "spec":{"group":"example.com","scope":"Namespaced",
                  "names":{"plural":"widgets","singular":"widget","kind":"Widget","listKind":"WidgetList"},
                  "versions":[{"name":"v1","served":true,"storage":true,
                   "schema":{"openAPIV3Schema":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}}]}}""");
        // the status controller marks it Established; its resource path is served from then on
        Poll.untilTrue(
                Duration.ofMinutes(1),
                Duration.ofMillis(100),
                "CRD widgets.example.com served",
                () -> c.status("/apis/example.com/v1/namespaces/default/widgets") == 200);
        // establishing it updated the CRD's status: record what it is now
        JsonNode now = c.get(crd + "/widgets.example.com");
        live.put(
                crd + "/widgets.example.com",
                new Stored(now.path("metadata").path("uid").asText(), rv(now)));
    }

    private ObjectNode create(KubeClient c, String collection, String json) throws Exception {
        ObjectNode created = c.create(collection, KubeClient.JSON.readTree(json));
        String name = created.path("metadata").path("name").asText();
        live.put(
                collection + "/" + name,
                new Stored(created.path("metadata").path("uid").asText(), rv(created)));
        return created;
    }

    private ObjectNode modify(KubeClient c, String path, java.util.function.Consumer<JsonNode> change)
            throws Exception {
        ObjectNode current = c.get(path);
        change.accept(current);
        ObjectNode updated = c.update(path, current);
        Stored before = live.get(path);
        if (rv(updated).equals(before.resourceVersion()))
            throw new AssertionError("update of " + path + " kept its resourceVersion");
        live.put(path, new Stored(before.uid(), rv(updated)));
        return updated;
    }

    private ObjectNode remove(KubeClient c, String path) throws Exception {
        ObjectNode answer = c.delete(path);
        live.remove(path);
        deleted.add(path);
        return answer;
    }

    static String rv(JsonNode object) {
        return object.path("metadata").path("resourceVersion").asText();
    }

    private static String microTime() {
        return MICRO_TIME.format(Instant.now());
    }

    /** Every live object served with its recorded uid and resourceVersion, every deleted one 404; returns how many were read. */
    public int assertServed(KubeClient c) throws Exception {
        for (Map.Entry<String, Stored> e : live.entrySet()) {
            JsonNode now = c.get(e.getKey());
            Stored served = new Stored(now.path("metadata").path("uid").asText(), rv(now));
            if (!served.equals(e.getValue()))
                throw new AssertionError(e.getKey() + ": recorded " + e.getValue() + ", served " + served);
        }
        for (String path : deleted) {
            int status = c.status(path);
            if (status != 404) throw new AssertionError(path + " was deleted, but GET answers " + status);
        }
        return live.size() + deleted.size();
    }

    /** The watched collection as it was at the old resourceVersion (resourceVersionMatch=Exact): same items, same versions. */
    public void assertListAtOld(KubeClient c) throws Exception {
        ObjectNode list = c.list(WATCHED, "resourceVersion=" + oldResourceVersion + "&resourceVersionMatch=Exact");
        Map<String, String> items = new TreeMap<>();
        list.path("items")
                .forEach(i -> items.put(i.path("metadata").path("name").asText(), rv(i)));
        if (!list.path("metadata").path("resourceVersion").asText().equals(oldResourceVersion)
                || !items.equals(listAtOld)) {
            throw new AssertionError(
                    "list at " + oldResourceVersion + " (Exact): expected " + listAtOld + ", got " + items + " at "
                            + list.path("metadata").path("resourceVersion").asText());
        }
    }

    /**
     * Watches the collection from the old resourceVersion: either the events that followed it, in order
     * and with their resourceVersions ("works"), or a clean 410 Gone ("410"); anything else fails.
     */
    public String watchFromOld(KubeClient c) throws Exception {
        KubeClient.WatchResult w = c.watch(WATCHED, oldResourceVersion, 5, eventsAfterOld.size());
        if (w.gone()) return "410";
        if (w.httpStatus() != 200)
            throw new AssertionError(
                    "watch from " + oldResourceVersion + " answered " + w.httpStatus() + " " + w.events());
        List<Expected> seen = new ArrayList<>();
        for (JsonNode e : w.events()) {
            seen.add(new Expected(
                    e.path("type").asText(),
                    e.path("object").path("metadata").path("name").asText(),
                    e.path("type").asText().equals("DELETED") ? null : rv(e.path("object"))));
        }
        if (!seen.equals(eventsAfterOld))
            throw new AssertionError(
                    "watch from " + oldResourceVersion + ": expected " + eventsAfterOld + ", got " + seen);
        return "works";
    }

    /** A create and an update after the migration: both answered, with resourceVersions above every recorded one. */
    public void assertNewWrites(KubeClient c, String name) throws Exception {
        long highest = live.values().stream()
                .mapToLong(s -> Long.parseLong(s.resourceVersion()))
                .max()
                .orElseThrow();
        String collection = "/api/v1/namespaces/team-b/configmaps";
        ObjectNode created = create(
                c,
                collection,
                "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"%s\"},\"data\":{\"k\":\"1\"}}"
                        .formatted(name));
        ObjectNode updated = modify(c, collection + "/" + name, n -> ((ObjectNode) n.path("data")).put("k", "2"));
        if (Long.parseLong(rv(created)) <= highest || Long.parseLong(rv(updated)) <= Long.parseLong(rv(created))) {
            throw new AssertionError(
                    "new writes got resourceVersions " + rv(created) + ", " + rv(updated) + " after " + highest);
        }
    }

    /** Kinds and how many live objects of each were recorded (the report's object counts). */
    public Map<String, Integer> counts() {
        return counts(live.keySet());
    }

    public static Map<String, Integer> counts(Iterable<String> paths) {
        Map<String, Integer> counts = new LinkedHashMap<>();
        for (String path : paths) {
            String[] parts = path.split("/");
            counts.merge(parts[parts.length - 2], 1, Integer::sum);
        }
        return counts;
    }
}
