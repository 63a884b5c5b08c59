package dev.etcdmigrate;

import dev.etcdmigrate.log.Log;
import dev.etcdmigrate.process.Children;
import java.util.List;
import java.util.Map;

/**
 * One command of the runner behind its word ({@code migrate}, {@code plan}, {@code inspect}, {@code status}, a tool
 * beside the runner): {@link Main} reads the output flags, makes the log and the child registry, picks the command
 * and maps what it throws to the exit status; the command reads its own flags and does its work.
 */
interface Command {

    /** Its own {@code --help}. */
    String help();

    /**
     * @param args the words after the command word (all of them when the word was left out: migrate)
     * @return the exit status
     */
    int run(List<String> args, Map<String, String> environment, Log log, Children children) throws Exception;
}
