package dev.etcdmigrate.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class EnvironmentCheckTest {

    @Test
    void variablesDuplicatingGivenFlagsAreNamedOnceAndSorted() {
        Map<String, String> env = Map.of("ETCD_NAME", "a", "ETCD_DATA_DIR", "/d", "ETCD_CREDS", "x", "HOSTNAME", "h",
                "ETCD_INITIAL_CLUSTER_STATE", "new");
        List<String> args = List.of("--name", "a", "--data-dir=/d", "--name=b", "--initial-cluster-state", "existing", "--", "value",
                "--listen-client-urls", "http://127.0.0.1:2379");
        assertEquals(List.of("ETCD_DATA_DIR (--data-dir)", "ETCD_INITIAL_CLUSTER_STATE (--initial-cluster-state)", "ETCD_NAME (--name)"),
                EnvironmentCheck.conflicts(env, args));
    }

    @Test
    void variablesWithoutAMatchingFlagAreFine() {
        assertEquals(List.of(), EnvironmentCheck.conflicts(Map.of("ETCD_NAME", "a", "ETCD_CREDS", "--peer-cert-file=x"),
                List.of("--listen-client-urls", "http://127.0.0.1:2379")));
        assertEquals(List.of(), EnvironmentCheck.conflicts(Map.of(), List.of("--name", "a")));
    }
}
