package dev.etcdmigrate.ondisk;

import java.nio.file.Path;

/**
 * A raftpb.ConfChange entry of the WAL {Type = 2 (0 add, 1 remove, 2 update, 3 add learner), NodeID = 3, Context = 4
 * (the member as JSON)}; only those raft still holds (an entry rewritten at its index by a later leader drops them).
 */
public record ConfChange(long index, int type, long nodeId, String context, Path segment) {}
