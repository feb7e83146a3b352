package io.kolo.k8s;

import java.util.regex.Pattern;

/**
 * Checks a container image reference as container runtimes parse it ({@code [host[:port]/]path[:tag][@digest]}, the
 * path in lower case). The API server takes almost any string; a bad one shows only on the node, as
 * {@code InvalidImageName}, after the pods were made.
 */
final class ImageReference {
    private static final String DOMAIN_COMPONENT = "[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?";
    private static final String DOMAIN = DOMAIN_COMPONENT + "(?:\\." + DOMAIN_COMPONENT + ")*(?::[0-9]+)?";
    private static final String PATH_COMPONENT = "[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*";
    private static final String TAG = ":[\\w][\\w.-]{0,127}";
    private static final String DIGEST = "@[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}";
    private static final Pattern REFERENCE = Pattern.compile("(?:" + DOMAIN + "/)?" + PATH_COMPONENT + "(?:/"
            + PATH_COMPONENT + ")*(?:" + TAG + ")?(?:" + DIGEST + ")?");

    private ImageReference() {
    }

    /** {@link IllegalArgumentException} in one line when {@code image} is not a reference a node could pull. */
    static void check(String image) {
        if (!REFERENCE.matcher(image).matches()) {
            throw new IllegalArgumentException("--image '" + image + "' is not an image reference: use"
                    + " [REGISTRY[:PORT]/]NAME[:TAG][@sha256:DIGEST], NAME in lower case letters, digits, '.', '_', '-'"
                    + " and '/' (e.g. registry.example.com/train:1.0)");
        }
    }
}
