package io.github.zklock.chaos;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;

/**
 * Debian's {@code zookeeper} package (3.8, its jars from {@code libzookeeper-java}) and the command
 * that runs a server from it.
 *
 * <p>Debian builds ZooKeeper against SLF4J 1.7 with log4j 1.2 as the backend (its sample
 * configuration is {@code /etc/zookeeper/conf_example/log4j.properties}; Debian has no logback),
 * but the jar's manifest class path names {@code slf4j-api} alone and the package's scripts add no
 * binding, so a server started the way they start it logs nothing (SLF4J falls back to its
 * no-operation logger). The binding, {@code slf4j-log4j12}, and log4j 1.2 itself, both
 * dependencies of {@code libzookeeper-java}, are added here.
 */
final class ZooKeeperPackage {

	/** The server jar; its manifest class path brings the rest of ZooKeeper's dependencies. */
	static final Path SERVER_JAR = Path.of("/usr/share/java/zookeeper.jar");

	private static final List<Path> LOGGING_JARS = List.of(Path.of("/usr/share/java/slf4j-log4j12.jar"),
			Path.of("/usr/share/java/log4j-1.2.jar"));

	private ZooKeeperPackage() {
	}

	/**
	 * Whether the server jar is installed.
	 * @return whether {@link #SERVER_JAR} can be read
	 */
	static boolean available() {
		return Files.isReadable(SERVER_JAR);
	}

	/**
	 * Prepare the files that every server's command needs, in the work directory:
	 * {@code launcher/} (the {@link ServerLauncher} class alone) and {@code log4j.properties}.
	 * @param workDir the ensemble's directory
	 * @return the command, up to the per-server options
	 * @throws IllegalStateException if a jar is missing (the message names the package to install)
	 * @throws IOException if a file cannot be written
	 */
	static Command prepare(Path workDir) throws IOException {
		List<Path> jars = new ArrayList<>();
		jars.add(SERVER_JAR);
		jars.addAll(LOGGING_JARS);
		List<Path> missing = jars.stream().filter((jar) -> !Files.isReadable(jar)).toList();
		if (!missing.isEmpty()) {
			throw new IllegalStateException("Debian's ZooKeeper server is not installed (missing " + missing
					+ "): install the 'zookeeper' package (apt-get install zookeeper), which brings "
					+ "libzookeeper-java, libslf4j-java and liblog4j1.2-java");
		}
		List<String> classPath = new ArrayList<>();
		classPath.add(copyLauncher(workDir).toString());
		jars.forEach((jar) -> classPath.add(jar.toString()));
		List<String> javaAndOptions = List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
				"-Xmx128m", "-XX:+UseSerialGC", "-Djava.net.preferIPv4Stack=true",
				"-Dzookeeper.jmx.log4j.disable=true", "-Dlog4j.configuration=" + writeLog4jConfiguration(workDir).toUri());
		return new Command(javaAndOptions, String.join(File.pathSeparator, classPath));
	}

	/** The launcher class alone, in a class path directory of its own. */
	private static Path copyLauncher(Path workDir) throws IOException {
		String resource = ServerLauncher.class.getName().replace('.', '/') + ".class";
		Path directory = workDir.resolve("launcher");
		Path target = directory.resolve(resource);
		Files.createDirectories(target.getParent());
		try (InputStream in = ServerLauncher.class.getClassLoader().getResourceAsStream(resource)) {
			if (in == null) {
				throw new IllegalStateException("Cannot read " + resource + " from the class path");
			}
			Files.copy(in, target, StandardCopyOption.REPLACE_EXISTING);
		}
		return directory;
	}

	/** Each server logs to {@code server.log} in its directory, {@code -Dzookeeper.log.dir}. */
	private static Path writeLog4jConfiguration(Path workDir) throws IOException {
		Path file = workDir.resolve("log4j.properties");
		Files.write(file, List.of("# ZooKeeper's log, for each server of the ensemble in its own directory.",
				"log4j.rootLogger=INFO, FILE", "log4j.appender.FILE=org.apache.log4j.FileAppender",
				"log4j.appender.FILE.File=${zookeeper.log.dir}/server.log", "log4j.appender.FILE.Append=true",
				"log4j.appender.FILE.layout=org.apache.log4j.PatternLayout",
				"log4j.appender.FILE.layout.ConversionPattern=%d{ISO8601} [myid:%X{myid}] %-5p [%t] %c{1} - %m%n"),
				StandardCharsets.UTF_8);
		return file;
	}

	/**
	 * The command that runs a server, up to the per-server options.
	 * @param javaAndOptions the java launcher of this JVM's installation and the options every
	 * server's JVM gets: 128 MB of heap, the serial collector, IPv4, log4j's configuration
	 * @param classPath {@link ServerLauncher}'s directory, Debian's server jar and the logging jars
	 */
	record Command(List<String> javaAndOptions, String classPath) {
	}

}
