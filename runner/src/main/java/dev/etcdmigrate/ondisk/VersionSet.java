package dev.etcdmigrate.ondisk;

/** A cluster version (or downgrade target) some WAL entry set, at its raft index ({@link WalRecords}). */
public record VersionSet(long index, String version, String how) {}
