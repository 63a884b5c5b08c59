package dev.etcdmigrate.image;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The image's etcd-migrate command (src/launcher/etcd-migrate.c) runs the runner exactly as the entrypoint does:
 * its command line is the entrypoint's, word for word, so `kubectl exec ... etcd-migrate status` gets the same
 * JVM as the pod's own start. ImageIT runs it in a container.
 */
class LauncherTest {

    @Test
    void launcherRunsTheEntrypointsCommandLine() throws Exception {
        Path pomFile = Path.of(System.getProperty("image.pom"));
        String pom = Files.readString(pomFile);
        String c = Files.readString(pomFile.resolveSibling("src/launcher/etcd-migrate.c"));
        List<String> entrypoint = entrypoint(pom);
        assertTrue(entrypoint.size() > 2, "no <entrypoint> in " + pomFile);
        assertEquals(
                entrypoint, launcherWords(c), "etcd-migrate.c's ENTRYPOINT must equal image/pom.xml's <entrypoint>");
    }

    @Test
    void launcherIsOnTheImagesPath() throws Exception {
        String pom = Files.readString(Path.of(System.getProperty("image.pom")));
        Matcher path = Pattern.compile("<PATH>([^<]*)</PATH>").matcher(pom);
        assertTrue(path.find(), "the image's PATH");
        assertTrue(List.of(path.group(1).split(":")).contains("/usr/local/bin"), path.group(1));
    }

    static List<String> entrypoint(String pom) {
        int start = pom.indexOf("<entrypoint>");
        int end = pom.indexOf("</entrypoint>", start);
        List<String> words = new ArrayList<>();
        if (start < 0 || end < 0) return words;
        Matcher arg = Pattern.compile("<arg>([^<]*)</arg>").matcher(pom.substring(start, end));
        while (arg.find()) words.add(arg.group(1));
        return words;
    }

    static List<String> launcherWords(String c) {
        int start = c.indexOf("ENTRYPOINT[] = {");
        int end = c.indexOf("};", start);
        List<String> words = new ArrayList<>();
        if (start < 0 || end < 0) return words;
        Matcher word = Pattern.compile("\"([^\"]*)\"").matcher(c.substring(start, end));
        while (word.find()) words.add(word.group(1));
        return words;
    }
}
