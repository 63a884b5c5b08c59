package dev.etcdmigrate.image;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.google.gson.JsonElement;
import com.google.gson.JsonParser;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.util.Map;

/**
 * Strict validation against Kubernetes' API schema with its generated Java model (client-java-api):
 * each model's validateJsonElement refuses a field the API does not define and a missing required
 * field, recursively, the way `kubectl apply --validate=strict` would.
 */
final class KubernetesSchema {

    private static final ObjectMapper JSON = new ObjectMapper();
    /** apiVersion/kind -> model class; only the kinds the project ships. */
    private static final Map<String, String> MODELS = Map.of(
            "v1/Pod", "V1Pod",
            "v1/Service", "V1Service",
            "apps/v1/StatefulSet", "V1StatefulSet");

    private KubernetesSchema() {}

    /** Throws AssertionError naming where and what the schema refuses. */
    static void validate(JsonNode object, String where) {
        String type =
                object.path("apiVersion").asText() + "/" + object.path("kind").asText();
        String model = MODELS.get(type);
        if (model == null)
            throw new AssertionError(where + ": no schema known for " + type + " (known: " + MODELS.keySet() + ")");
        try {
            Method validate = Class.forName("io.kubernetes.client.openapi.models." + model)
                    .getMethod("validateJsonElement", JsonElement.class);
            JsonElement element = JsonParser.parseString(JSON.writeValueAsString(object));
            validate.invoke(null, element);
        } catch (InvocationTargetException e) {
            throw new AssertionError(
                    where + ": not a valid " + type + ": " + e.getCause().getMessage(), e.getCause());
        } catch (ReflectiveOperationException | java.io.IOException e) {
            throw new AssertionError(where + ": cannot validate " + type, e);
        }
    }
}
