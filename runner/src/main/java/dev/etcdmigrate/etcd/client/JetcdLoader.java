package dev.etcdmigrate.etcd.client;

import java.io.IOException;
import java.lang.reflect.InvocationTargetException;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/**
 * Loads {@code jetcd.V3Keyspace} with jetcd and its gRPC, Netty and Vert.x stack, which the packaged runner's class path
 * leaves out (the runner jar's manifest names only the start's libraries). Only the etcd2 conversions and dumps use
 * them, yet the JDK walks every jar of the class path for a service provider when a run first starts a process or
 * exits (its System.Logger lookup), opening each jar and reading its whole directory: those jars would be most of the
 * class path's entries, and the walk runs beside every first start's reads of the data.
 *
 * <p>Where jetcd is on the runner's own class path (the build's tests), it is used as it is. Otherwise a loader over
 * the jars beside the runner's (its {@code lib/} directory) defines the classes of the {@code jetcd} package itself
 * (one runtime package: they share package-private members), so that their references to jetcd resolve there;
 * every other class, the {@link Keyspace} they implement included, comes from the runner's loader.
 */
final class JetcdLoader {

    private JetcdLoader() {}

    private static final String PACKAGE = "dev.etcdmigrate.etcd.client.jetcd.";
    private static final String IMPLEMENTATION = PACKAGE + "V3Keyspace";

    static Keyspace open(URI clientUrl) throws IOException {
        try {
            return (Keyspace) Holder.LOADER
                    .loadClass(IMPLEMENTATION)
                    .getConstructor(URI.class)
                    .newInstance(clientUrl);
        } catch (InvocationTargetException e) {
            if (e.getCause() instanceof RuntimeException unchecked) throw unchecked;
            if (e.getCause() instanceof Error error) throw error;
            throw new IOException(e.getCause());
        } catch (ReflectiveOperationException e) {
            throw new IOException("cannot load the v3 keyspace client (jetcd): " + e, e);
        }
    }

    /** Made at the first conversion or dump: a run that needs neither never lists the directory. */
    private static final class Holder {
        static final ClassLoader LOADER = loader();
    }

    private static ClassLoader loader() {
        ClassLoader own = JetcdLoader.class.getClassLoader();
        try {
            Class.forName("io.etcd.jetcd.Client", false, own);
            return own;
        } catch (ClassNotFoundException notOnTheClassPath) {
            // the packaged runner: jetcd sits in lib/ beside the runner's jar
        }
        try {
            Path runner = Path.of(JetcdLoader.class
                    .getProtectionDomain()
                    .getCodeSource()
                    .getLocation()
                    .toURI());
            List<URL> urls = new ArrayList<>();
            urls.add(runner.toUri().toURL());
            Path lib = runner.resolveSibling("lib");
            try (Stream<Path> jars = Files.list(lib)) {
                for (Path jar :
                        jars.filter(p -> p.toString().endsWith(".jar")).sorted().toList())
                    urls.add(jar.toUri().toURL());
            }
            return new ImplementationFirst(urls.toArray(URL[]::new), own);
        } catch (URISyntaxException | IOException | RuntimeException e) {
            // no jar to read from: the failure to load V3Keyspace names the cause
            return own;
        }
    }

    /** Defines the jetcd package's classes from its own jars; asks its parent first for everything else. */
    private static final class ImplementationFirst extends URLClassLoader {
        static {
            registerAsParallelCapable();
        }

        ImplementationFirst(URL[] urls, ClassLoader parent) {
            super("etcd-migrate-jetcd", urls, parent);
        }

        @Override
        protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
            if (!name.startsWith(PACKAGE) || name.indexOf('.', PACKAGE.length()) >= 0) {
                return super.loadClass(name, resolve);
            }
            synchronized (getClassLoadingLock(name)) {
                Class<?> c = findLoadedClass(name);
                if (c == null) c = findClass(name);
                if (resolve) resolveClass(c);
                return c;
            }
        }
    }
}
