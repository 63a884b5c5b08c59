package dev.etcdmigrate.ondisk;

/** An alarm recorded in the db (etcd's alarm bucket): its type and the member that raised it. */
public record Alarm(String type, String memberId) {}
