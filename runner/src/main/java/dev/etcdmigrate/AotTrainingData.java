package dev.etcdmigrate;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;

/**
 * A one-member etcd 3.5.35 data dir (member "training", peer http://127.0.0.1:23800), gzip'd and Base64'd: the
 * db cut to its last used page, the WAL segment to its last record (etcd preallocates 64 MB), and for the
 * snapshot shape the newest v2 snapshot of a start with --snapshot-count=1 and one put.
 */
final class AotTrainingData {

    static final String VERSION = "3.5.35";
    /** The same first start by etcd 3.4.23 (the raft voters come from the WAL: 3.4 keeps no confState). */
    static final String V34 = "3.4.23";

    static final String MEMBER = "training";
    static final String SNAPSHOT_NAME = "0000000000000003-0000000000000006.snap";

    static void write(Path file, String gzipBase64) throws IOException {
        byte[] bytes;
        try (java.util.zip.GZIPInputStream in = new java.util.zip.GZIPInputStream(
                new java.io.ByteArrayInputStream(java.util.Base64.getDecoder().decode(gzipBase64)))) {
            bytes = in.readAllBytes();
        }
        Files.write(file, bytes);
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-------"));
    }

    static final String WAL_ONLY_DB = ""
            + "H4sIAAAAAAACA+3bvW7TUBQH8Nw0hIIq4A2KrsQWpf7IR+MVFiQWgoqEaIku8Q218EdlOxGldOAVEBMTEgsjCwsbEk/BwghL"
            + "XgG4xichjoDbIYAF/19065zk3NjXtiqdo6RSydVoO32/Ma1mTy7k8Vql6As5RXGdti+CD/W3h/6zCgAAAAAAAACUDtPU/zVN"
            + "/X+atpc+7b38/Gj3Hc4oAAAAAAAAQPlU59uz837AczWy+v4ixa+pD3CF4qkaZxber7NivMnyvsAs7rD8ewSz+Corfv6dpfyx"
            + "+nN+IX7K8v1nsfBFHOgWI8bp/s9z2Px51uPYUGOd5vTlxEu8KKS32bfXIl8mJ9nhTiJjbeLQHyepjHVp9+WhLsWXIpG6pEAG"
            + "d09wVJQ2iGUQTaSrT0+FLgcAAAAAAADKZa1E9f8Tij8u1f/1ar7/V6j/V13/F89FNvpqWNK02j23ZbZHljBaxhH3XO7Yttnb"
            + "NludltXtmB2722tbDX4gZbzTv5Zw5zbfT9MDZ2vLtLpNQz1Mx7K3DYPvNXgoAskdnsbCC73wHj9eacfh+29UDLozbYp3aVHr"
            + "FLt0J2fxMApHN1KRyiM+idQ1yZbwgyWqo1dXNxqo8z1RaxgJP5HHam7iqQsZpgMvdOWD2Q2jPmZ2czL8bwEAAAAAgHKp/cb6"
            + "/zLFt5bqf3+p/n9M+W8otqrF+v/6f1T/Fw/uHF0JmnZT7UEdnt1sN42/2CJ4+CdaBA0+9D1VYP9iZrenZv6jrYTaQisB36kA"
            + "AAAAAIBV+Aq51Gm3AFAAAA==";

    static final String WAL_ONLY_WAL = ""
            + "H4sIAAAAAAACA2NhAIMWDhYBMEMWwm/mYBTonfNTTEqE48CBU+sP7prWqSfQfvXtrv6rcw+yABXwQdQ1cbAKtPcc7eWVYuFg"
            + "AJlQAjOPSeDL7t3tvFJZQJMYJRiVkkDyEnDDlIKqlTJTlKyMjQ0tLQxNzEyMzM0MzYzNLU2NdJQKUlOLQoN8ipWsopUySkoK"
            + "rPT1DY3M9QyA0NDKyNjCwEApVkcpLzE3VclKqaQoMTMvMy9dqRZkMcQXDAwczAJ7pncd45ZiA9rPIMEIF2cSmHdv6TdeoDiD"
            + "AJMEkwRC/cIf97dxSPEBVcBdKcG0AKHv4qtFDYxSUxnBGpmVehg5GpuuNrYeWbFgAaMQc0BoiJSavoF+bmpuUmpRsb5RqqGR"
            + "qWWKiaFpmlGigYmBfmJJSVFmUmlJarGSdTWG43WUknMyU/NK8Hjb3BLo7VoNBiMGCwYPhgCGCIYEhgyGAoYKhgZGBiR/fJg3"
            + "Yw8jmj+YfRDxcvNe0xUmKSewN1iUrDia0HzBBfRFGdALmfl5SqzGeqZ6BjjsBAEke79s3PyPC81eFgCkh+J2YAIAAA==";

    static final String SNAPSHOT_DB = ""
            + "H4sIAAAAAAACA+3aTWvUQBgH8E127RultjdvljnKus3LvjQ5VvGkBysVii9hupm1wbyUZLpYSwW/gjdv3gURoRcRP4f4HfYz"
            + "1Il5srqLbSqIVPn/lunk2ZlJMjvpwjNsrVZoUD36ujjS84PlIq7XJp2QSxQvUf328/bj+Q8br2oAAAAAAAAAcOFoFfl/oyL/"
            + "v0z1defLya1j6xM+UQAAAAAAAICLRx/XC+P9gDeq5Pn9KsXHtA9wk+KRKvM/tc9ok/FV9WdW1Tco3taK3xGU7aE2ef6X1P8j"
            + "xZZe7CuU7Xf14vrvVeEhT6OqyfB9uXt6H218nO9xLKoyR2M2xTDIgiSmZu37e0kosvNccCsTaWXHfrifSZGe9+aWaCVo2H11"
            + "BXV7dqvTMp6Kg6qLhYJnoqpTJKKdM2988o7y8jxfI2FaHcdvm52BxY22ccgCn7m2bTrrZrvbtnpds2v3nI7VZHtCpFubtzPm"
            + "PmC7Uu65a2um1WsZ6mW6lr1uGOxRk8U8EsxlMuVBHMRPWJP1w0DE8oyRPUeNPKIJeKmIkqHwq+cr+el9fvzcxaCH3Kb4IU1+"
            + "jmKf/inyuJ/Eg3uSS3HIholap/yGf/FRqFmqByXx1LoM1VwHPMzEkRqbBWpxY+kFsS+e0eln1GnK57yOrykAAAAAAPgD6n8x"
            + "/79D8eup/P/dVP7vTeX/L5D//2b+P3mWFZpm2eyVRwsaX9av6KvaNW0HmwX/7mbBLDYLAAAAAACgWgP5P/J/5P/I/wEAAAAA"
            + "4L/3DYJSZYIAUAAA";

    static final String SNAPSHOT_WAL = ""
            + "H4sIAAAAAAACA2NhAIMWDhYBMEMWwm/mYBTonfNTTEqE48CBU+sP7prWqSfQfvXtrv6rcw+yABXwQdQ1cbAKtPcc7eWVYuFg"
            + "AJlQAjOPSeDL7t3tvFJZQJMYJRiVkkDyEnDDlIKqlTJTlKyMjQ0tLQxNzEyMzM0MzYzNLU2NdJQKUlOLQoN8ipWsopUySkoK"
            + "rPT1DY3M9QyA0NDKyNjCwEApVkcpLzE3VclKqaQoMTMvMy9dqRZkMcQXDAwczAJ7pncd45ZiA9rPIMEIF2cSmHdv6TdeoDiD"
            + "AJMEkwRC/cIf97dxSPEBVcBdKcG0AKHv4qtFDYxSUxnBGpmVehg5GpuuNrYeWbFgAaMQc0BoiJSavoF+bmpuUmpRsb5RqqGR"
            + "qWWKiaFpmlGigYmBfmJJSVFmUmlJarGSdTWG43WUknMyU/NK8Hjb3BLo7VoNBiMGCwYPhgCGCIYEhgyGAoYKhgZGBiR/fJg3"
            + "Yw8jmj+YfRDxcvNe0xUmKSewN1iUrDia0HzBBfRFGdALmfl5SqzGeqZ6BjjsBAEke79s3PyPC81eFhmYvawCBza/Oc4rJQRM"
            + "aUxSPIhkpcGAEm9MAiff7VrCCY4fZglWpPC/0bBvAh8k/Jkl2MDh/+BL8+AL/74Pb5bzAsOBGSkc2JDC4Wnjvj2swHBgE2DG"
            + "DAcNhH+7dl6/wSclB/Yuu5KYEhsXY6IQY9IiNm6OZrjHkezdturvdQ40e9kB4DKjE+ADAAA=";

    static final String SNAPSHOT_SNAP = ""
            + "H4sIAAAAAAACA+1Zy27TQBRFQkKlYoGyYj0rFiYeP6JS70po1UoFQVOKRN3FxL5tRvVL43HaUOUD+AHEX3TPqmxZsuQ3WCMx"
            + "thvHjxQ1kCwqjW0da+5j7rkzdzZ3Vn78/vnrYevSWv1iXaC9MORI/N8QPkAWUpGCugwIB3cncOEcWVhBr0KXHtOyZPM8ogz2"
            + "qQ/CB2OsPcu+fYyt7PsgpjkgXpKq0xkH1HMZBGkgXI6Glx7OB78PLK4EVSfCenCtEVz7r+A6aHpn3TW1zrFOsIlnslAbVsum"
            + "RThntJ9wiG9HSC051LmZDW7mfNwubBQQH2xk2YgzQgManNhIsZHjUQj4u73dWOgObTTgPLJUVdPX2li8mqUba+vYRkfjSnpB"
            + "4nljBTFyzDfmzbPmtPB9ELlGAOyvOT3HN+SUPgoaCuI0DKoJTYR1wkaDsDEfYaPdaeNZVBSklSloyz7HefLvCXcGwLaTfhp8"
            + "cyjqY5vGPGSjdPw2gdTzWiH2/FCUusOz1UJOxk5MGoRuZnQKo3mrYfhP2+g3SsapVpXIrEQ0Bj4XS3IDwwUcqhpzvc5cvxXz"
            + "aXEOa1XlN2qzOr9xV1bGrDM3RbFGDIav78o2psdaggQJEiRIkCBBggQJEiRIkCBBggQJC4MjBfXoR8i6h1ssDHjWIn9BnNNM"
            + "1CURcSgfIUvDGI+FMSeMT5vIuyTmRbdRqLsJYxDwaUdS2PPs4uMEeNxLHAfiOPNMx1uEeplVXFYa+ThXCjIueMChUBeSwiCJ"
            + "XFI1yCWFQd5pLEfPJVOD0I8Ig43A7Z2RqDxTVTPD4WWDXV1XOEF28dANk+tVPssvElKv6dIdTK5W9HGrtfpo5erq++W3r58/"
            + "tZ/ee/zgyf0/OlNYcjgdAAA=";

    static final String V34_DB = ""
            + "H4sIAAAAAAACA+3azWrUUBTA8WQ6flKs+y6Uux6m+ZqPZFXQTaEbB6qIaImdqw0mmZKkBRUX4ot04St04xO4dO1OXM8zaGLu"
            + "xCZgM4JCYf6/ISRn7rmTm8zqnETTSl21n39dn3eKg9tlvKbV/VCuqPj6Yt5knG1uj79oAAAAAADg0tFb6v9OS/1/Te2/f/s8"
            + "cD/un3JHAQAAAAC4fDrV/mbVDyiK+KK+v6viM9UfuK/ieb7dODd+Va/Hd/SyL7CIh3r5HsEi3tHrv/9M5X9S8Ua+qI1z4/1O"
            + "ef4i9kM/idouxj/ODv+co1fHRY9jXStfYijmTORJkAazWA3rv76bhTJd5oR7qUxaEw/C4zSTSVvaK/m6LSWUfirbkiIZPb9w"
            + "VfV7UWxv8s2SpjVwp445eGH5hmO8FcFUeLZtumPTGTrWaGgO7ZE7sHriSMpkb7KbCu+JOMyyI29ry7RGfSP/mJ5ljw1DPO2J"
            + "2I+k8ESW+EEcxC9FTxyEgYyzC2aO3HzmO3UB+4mMZidy2n69md+WAwAAAACrae0/1v/3VPy4Uf+Hjfr/faP+txr1/4MVqv/r"
            + "i7ul/gk17WF+hnx5dt/pG7QIaBEAAAAAwF/oVqVPt6r/t7X68/tHjX5A2Bj/oP2u15d8wP1vStNa2rIFIAAAAAAAq+cnJN6s"
            + "6gBQAAA=";

    static final String V34_WAL = ""
            + "H4sIAAAAAAACA2NhAIMWDhYBMEMWwm/mYBTonfNTTEqE48CBU+sP7prWqSfQfvXtrv6rcw+yABXwQdQ1cbAKtPcc7eWVYuFg"
            + "AJlQAjOPSeDL7t3tvFJZQJMYJRiVkkDyEnDDlIKqlTJTlKyMjQ0tLQxNzEyMzM0MzYzNLU2NdJQKUlOLQoN8ipWsopUySkoK"
            + "rPT1DY3M9QyA0NDKyNjCwEApVkcpLzE3VclKqaQoMTMvMy9dqRZkMcQXDAwczAJ7pncd45ZiA9rPIMEIF2cSmHdv6TdeoDiD"
            + "AJME03yIcCNQ/EbvrCKpqYxgcWalHkaOpglzJrUdWbFgAaMQc0BoiJSavoF+bmpuUmpRsb5RqqGRqWWKiaFpmlGigYmBfmJJ"
            + "SVFmUmlJarGSdTWG23SUknMyU/NK8PjK3BLoq1oNBiMGCwYPhgCGCIYEhgyGAoYKhgZGBgYJhL9eXtq4n0+KD+hieGhKMPsg"
            + "wv1d85pWLiknsD9YlKw4WtC8wQX0RhnQD5n5eUqsxnomega4LGVAtffXiwu8aPay2MHSAZPA9G1TFzNLmYDtZVXS4WhF2MsS"
            + "6O4aIsWgxIDTJiR7Jn08NY8dzR5WAHS9TQqoAgAA";
}

/**
 * A training run that must succeed: one that ends early (a refusal, a bad flag) trains the failure path
 * instead of the one the cache is for, so the build stops and says so.
 */
