package dev.etcdmigrate.ondisk;

/** The cluster version the data records now and where: the newest of the db, the snapshot and the WAL. */
public record ClusterVersion(String version, String where) {}
