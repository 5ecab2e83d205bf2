from django.urls import path

from . import views

app_name = "annotation"

urlpatterns = [
    path("", views.my_work, name="my_work"),
    path("languages/", views.languages, name="languages"),
    path("<int:assignment_id>/", views.resume, name="resume"),
    path("<int:assignment_id>/<int:position>/", views.judge, name="judge"),
    path("<int:assignment_id>/documents/<int:document_id>/", views.open_document, name="document"),
]
