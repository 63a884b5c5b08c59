package dev.etcdmigrate.ondisk;

import java.util.List;

/** A member as the data records it (the db's members bucket, the v2 store's /0/members, the WAL's conf changes). */
public record Member(String id, String name, List<String> peerUrls, boolean learner) {}
