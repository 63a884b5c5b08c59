package dev.etcdmigrate.step;

import java.util.List;

/**
 * Who the member is in its real cluster: needed where a tool builds a new member (snapshot
 * restore), so the restored member carries the operator's name and peer URLs, not the private ones.
 */
public record MemberIdentity(String name, String initialCluster, String advertisePeerUrls) {

    public List<String> restoreFlags() {
        return List.of("--name", name, "--initial-cluster", initialCluster, "--initial-advertise-peer-urls", advertisePeerUrls);
    }
}
