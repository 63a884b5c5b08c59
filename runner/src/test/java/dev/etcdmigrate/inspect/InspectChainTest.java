package dev.etcdmigrate.inspect;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.etcdmigrate.catalog.Catalog;
import dev.etcdmigrate.cluster.RolloutCoordinator;
import dev.etcdmigrate.event.DecisionEvent.PlannedLeg;
import dev.etcdmigrate.log.Json;
import dev.etcdmigrate.plan.Planner;
import dev.etcdmigrate.plan.RollingUpgradePolicy;
import dev.etcdmigrate.plan.RolloutChain;
import dev.etcdmigrate.version.DataVersion;
import java.util.List;
import org.junit.jupiter.api.Test;

/** inspect's targets carry the legs a cluster member walks, in its JSON and its text (the report's rendering). */
class InspectChainTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    private static List<PlannedLeg> legs(String current, String target) throws Exception {
        var plan = RollingUpgradePolicy.check(
                new Planner(Catalog.bundled()).plan(DataVersion.parse(current), DataVersion.parse(target)), 3);
        return RolloutChain.of(plan).planned(RolloutCoordinator.RECORD_KEY);
    }

    private static InspectReport report(List<InspectReport.Target> targets) {
        return new InspectReport(
                InspectReport.SCHEMA,
                "/d",
                "read offline",
                null,
                true,
                "etcd3",
                "3.7",
                "3.7",
                true,
                List.of(),
                new InspectReport.Label("version.txt", "3.7.3/etcd3", "agrees", "ok"),
                "3.7.0",
                "member/snap/db",
                "3.7.0",
                null,
                null,
                List.of(),
                null,
                List.of(),
                null,
                new InspectReport.V2Store(null, 0, 0, List.of()),
                null,
                List.of(),
                targets,
                null);
    }

    @Test
    void aTargetSeveralMinorsAwayShowsItsLegs() throws Exception {
        List<PlannedLeg> down = legs("3.7.3/etcd3", "3.5.35/etcd3");
        InspectReport r = report(List.of(
                new InspectReport.Target("3.5.35", "etcd3", List.of("a", "b"), null, down),
                new InspectReport.Target("3.6.16", "etcd3", List.of("a"), null, List.of()),
                new InspectReport.Target("3.4.23", "etcd3", null, "refused: new cluster ID", List.of())));

        JsonNode json = JSON.readTree(Json.object(r));
        JsonNode legs = json.path("targets").get(0).path("legs");
        assertEquals(2, legs.size());
        assertEquals("3.7", legs.get(0).path("from").asText());
        assertEquals("3.6", legs.get(0).path("downgradeJob").asText());
        assertEquals("3.6.16", legs.get(0).path("serves").asText());
        assertEquals("serve", legs.get(0).path("then").asText());
        assertEquals("3.5", legs.get(1).path("downgradeJob").asText());
        assertEquals("restart-record", legs.get(1).path("restart").asText());
        assertEquals("exec", legs.get(1).path("then").asText());
        assertEquals(0, json.path("targets").get(1).path("legs").size(), "one minor: no chain");
        assertEquals(0, json.path("targets").get(2).path("legs").size());

        List<String> text = InspectText.render(r).lines().toList();
        int target = text.indexOf(text.stream()
                .filter(l -> l.strip().startsWith("- 3.5.35/etcd3"))
                .findFirst()
                .orElseThrow());
        assertTrue(text.get(target + 2).strip().startsWith("leg 1: 3.7 -> 3.6"), String.join("\n", text));
        assertTrue(text.get(target + 3).strip().startsWith("leg 2: 3.6 -> 3.5"), String.join("\n", text));
        assertTrue(text.get(target + 4).strip().startsWith("- 3.6.16/etcd3"), "the next target follows the legs");
        assertEquals(2, text.stream().filter(l -> l.strip().startsWith("leg ")).count());
    }
}
